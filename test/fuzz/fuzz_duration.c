/* fuzz_duration.c: rl_duration_parse and rl_duration_format. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "redlock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), buf[64];
	int64_t ms;

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (rl_duration_parse(s, &ms) == 0) {
		if (ms < 0)
			abort();	/* a duration is never negative */
		rl_duration_format(ms, buf, sizeof(buf));
	}
	free(s);
	return 0;
}
