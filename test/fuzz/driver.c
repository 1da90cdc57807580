/* driver.c: run a fuzz harness over files (its corpus and regressions)
 * without libFuzzer, so that `make test` replays them under ASan/UBSan. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		unsigned char *buf;
		long n;

		if (f == NULL || fseek(f, 0, SEEK_END) != 0 ||
		    (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
			fprintf(stderr, "driver: cannot read %s\n", argv[i]);
			return 1;
		}
		if ((buf = malloc((size_t)n + 1)) == NULL ||
		    fread(buf, 1, (size_t)n, f) != (size_t)n) {
			fprintf(stderr, "driver: cannot read %s\n", argv[i]);
			return 1;
		}
		fclose(f);
		LLVMFuzzerTestOneInput(buf, (size_t)n);
		free(buf);
	}
	fprintf(stderr, "%d inputs replayed\n", argc - 1);
	return 0;
}
