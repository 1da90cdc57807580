/* fuzz_url.c: rl_url_parse, rl_url_format and rl_url_clear. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redlock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), err[256], out[512];
	struct rl_url u;

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (rl_url_parse(s, &u, err, sizeof(err)) == 0) {
		/* What is printed never shows the password. */
		if (u.password != NULL &&
		    rl_url_format(&u, out, sizeof(out)) == 0) {
			char needle[600];

			snprintf(needle, sizeof(needle), ":%s@", u.password);
			if (strstr(out, needle) != NULL)
				abort();
		}
		rl_url_clear(&u);
	}
	free(s);
	return 0;
}
