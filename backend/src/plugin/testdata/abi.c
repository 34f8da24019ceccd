/* ABI smoke test for libvexl, built and run by TestCABI.
 * usage: abi PROGRAM.vxb   (the program must be: in x, y / out x * y + 1) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libvexl.h"

#define CHECK(cond)                                                          \
	do {                                                                     \
		if (!(cond)) {                                                       \
			fprintf(stderr, "FAIL %s:%d: %s (last error: %s)\n", __FILE__,   \
			        __LINE__, #cond, vexl_last_error());                     \
			return 1;                                                        \
		}                                                                    \
	} while (0)

int main(int argc, char **argv) {
	static unsigned char buf[1 << 20];
	const double x[3] = {1.5, -2, 4}, y[3] = {2, 0.25, -8};
	const double *const ins[2] = {x, y};
	const double *const nul[2] = {x, NULL};
	const float xf[3] = {1.5f, -2, 4}, yf[3] = {2, 0.25f, -8};
	const float *const insf[2] = {xf, yf};
	double out[3], alias[3] = {1.5, -2, 4};
	const double *const insa[2] = {alias, y};
	float outf[3];
	long long h, h2;
	size_t n;
	FILE *f;
	int i;

	CHECK(argc == 2);
	f = fopen(argv[1], "rb");
	CHECK(f != NULL);
	n = fread(buf, 1, sizeof buf, f);
	fclose(f);

	printf("version %s\n", vexl_version());
	printf("profile %s\n", vexl_profile());
	CHECK(strcmp(vexl_last_error(), "") == 0);

	h = vexl_load(buf, n);
	CHECK(h > 0);
	CHECK(vexl_num_inputs(h) == 2);

	CHECK(vexl_run_f64(h, ins, 2, out, 3) == 0);
	for (i = 0; i < 3; i++) CHECK(out[i] == x[i] * y[i] + 1);
	CHECK(vexl_run_f32(h, insf, 2, outf, 3) == 0);
	for (i = 0; i < 3; i++) CHECK(outf[i] == xf[i] * yf[i] + 1);
	CHECK(vexl_run_f64(h, insa, 2, alias, 3) == 0); /* out aliases input 0 */
	for (i = 0; i < 3; i++) CHECK(alias[i] == x[i] * y[i] + 1);
	CHECK(vexl_run_f64(h, NULL, 2, NULL, 0) != 0); /* inputs array is NULL */
	CHECK(vexl_run_f64(h, nul, 2, NULL, 0) == 0);  /* n == 0: pointers unused */

	CHECK(vexl_run_f64(h, ins, 1, out, 3) != 0);
	CHECK(strstr(vexl_last_error(), "program takes 2 inputs (x, y), got 1") != NULL);
	CHECK(vexl_run_f64(h, nul, 2, out, 3) != 0);
	CHECK(strstr(vexl_last_error(), "input 1 is NULL") != NULL);
	CHECK(vexl_run_f32(h, insf, 2, NULL, 3) != 0);
	CHECK(strstr(vexl_last_error(), "out is NULL") != NULL);
	CHECK(vexl_run_f64(h + 1000, ins, 2, out, 3) != 0);
	CHECK(strstr(vexl_last_error(), "invalid handle") != NULL);

	CHECK(vexl_load(NULL, 0) <= 0);
	buf[n / 2] ^= 0x40;
	CHECK(vexl_load(buf, n) <= 0);
	CHECK(strstr(vexl_last_error(), "checksum mismatch") != NULL);
	buf[n / 2] ^= 0x40;

	h2 = vexl_load(buf, n);
	CHECK(h2 > h);
	vexl_free(h);
	CHECK(vexl_num_inputs(h) == -1);
	CHECK(vexl_num_inputs(h2) == 2);
	vexl_free(h);     /* twice: ignored */
	vexl_free(-7);    /* unknown: ignored */
	vexl_free(h2);
	printf("ok\n");
	return 0;
}
