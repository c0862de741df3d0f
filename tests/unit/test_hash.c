#include "config.h"

#include <criterion/criterion.h>
#include <string.h>

#include "common/hash.h"
#include "common/value.h"

Test(hash, sha256_of_abc_matches_fips_180_vector)
{
	uint8_t d[HASH_SHA256_LEN];
	char hex[HASH_SHA256_HEX_LEN + 1];

	hash_sha256("abc", 3, d);
	hash_hex(d, sizeof(d), hex);
	cr_assert_str_eq(hex,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

Test(hash, hmac_matches_rfc4231_case_2)
{
	uint8_t d[HASH_SHA256_LEN];
	char hex[HASH_SHA256_HEX_LEN + 1];
	const char *data = "what do ya want for nothing?";

	cr_assert(hash_hmac_sha256("Jefe", 4, data, strlen(data), d));
	hash_hex(d, sizeof(d), hex);
	cr_assert_str_eq(hex,
	    "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

Test(hash, parse_hex_roundtrip_and_refusals)
{
	uint8_t d[HASH_SHA256_LEN], back[HASH_SHA256_LEN];
	char hex[HASH_SHA256_HEX_LEN + 1];

	hash_sha256("x", 1, d);
	hash_hex(d, sizeof(d), hex);
	cr_assert(hash_parse_hex_sha256(hex, 64, back));
	cr_assert_eq(memcmp(d, back, sizeof(d)), 0);
	cr_assert_not(hash_parse_hex_sha256(hex, 63, back));
	hex[10] = 'g';
	cr_assert_not(hash_parse_hex_sha256(hex, 64, back));
}

Test(value, string_copy_is_owned_and_freed_to_absent)
{
	struct value v = { 0 };
	char src[] = "a\"b$(id)";

	cr_assert(value_set_string(&v, src, 3));
	src[0] = 'z';
	cr_assert_eq(v.kind, VALUE_STRING);
	cr_assert_eq(v.u.str.len, 3);
	cr_assert_str_eq(v.u.str.ptr, "a\"b");
	value_free(&v);
	cr_assert_eq(v.kind, VALUE_ABSENT);
	cr_assert_null(v.u.str.ptr);
}
