/*
 * The SHA-256 constants of FIPS 180-4 sections 4.2.2 and 5.3.3, exposed
 * only so that tests/unit/test_hash.c can recompute them from the primes.
 * Nothing but common/hash.c and that test includes this header.
 */
#ifndef SP_COMMON_HASH_CONST_H
#define SP_COMMON_HASH_CONST_H

#include <stdint.h>

/* First 32 bits of the fractional parts of the cube roots of primes 2..311. */
extern const uint32_t hash_sha256_round_k[64];
/* First 32 bits of the fractional parts of the square roots of primes 2..19. */
extern const uint32_t hash_sha256_initial_h[8];

#endif
