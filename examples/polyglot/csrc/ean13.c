/* ean13: the check digit of an EAN-13 barcode.
 *
 *   ean13 DIGITS   12 digits: prints the check digit, exit 0
 *                  13 digits: exit 0 if the check digit is right, else 1
 *                  anything else: exit 2
 *
 * Only tests/test_ean13.sh compiles and runs this file, so only that test
 * depends on it (and on the compiler and headers it used). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

static int check_digit(const char *digits) {
  int sum = 0;
  for (int i = 0; i < 12; i++) {
    int d = digits[i] - '0';
    sum += (i % 2 == 0) ? d : 3 * d;
  }
  return (10 - sum % 10) % 10;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: ean13 DIGITS\n");
    return 2;
  }
  const char *code = argv[1];
  size_t n = strlen(code);
  for (size_t i = 0; i < n; i++)
    if (!isdigit((unsigned char)code[i])) return 2;
  if (n == 12) {
    printf("%d\n", check_digit(code));
    return 0;
  }
  if (n == 13) return code[12] - '0' == check_digit(code) ? 0 : 1;
  return 2;
}
