/* The matrix program: checks the chosen checksum against its published check value, then runs it
 * over MATRIX_BYTES bytes and prints the result and the SysTick count it took. Plain newlib
 * (printf, malloc, exit); its verdict is its own "PASS"/"FAILED" line and exit code. */
#include <stdio.h>
#include <stdlib.h>

#include "checksum.h"

#define SYST_CSR (*(volatile uint32_t *)0xE000E010)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018)

int main(void)
{
    printf("matrix: alg=%s opt=%s\n", checksum_name, MATRIX_OPT);
    uint32_t check = checksum((const uint8_t *)"123456789", 9);
    if (check != checksum_check_value) {
        printf("FAILED: %s(\"123456789\") = 0x%08lx, expected 0x%08lx\n", checksum_name,
               (unsigned long)check, (unsigned long)checksum_check_value);
        return 1;
    }
    uint8_t *buf = malloc(MATRIX_BYTES);
    if (buf == NULL) {
        printf("FAILED: malloc(%d)\n", MATRIX_BYTES);
        return 1;
    }
    for (size_t i = 0; i < MATRIX_BYTES; i++) buf[i] = (uint8_t)(i * 167u + 13u);

    SYST_RVR = 0x00FFFFFFu;
    SYST_CVR = 0;
    SYST_CSR = 5; /* enable, processor clock */
    uint32_t t0 = SYST_CVR;
    uint32_t sum = checksum(buf, MATRIX_BYTES);
    uint32_t t1 = SYST_CVR;
    free(buf);

    printf("bytes: %d\n", MATRIX_BYTES);
    printf("result: 0x%08lx\n", (unsigned long)sum);
    printf("cycles: %lu\n", (unsigned long)((t0 - t1) & 0x00FFFFFFu));
    printf("PASS: %s check value ok\n", checksum_name);
    return 0;
}
