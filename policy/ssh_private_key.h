/*
 * What an SSH private key file says in the clear, read without a byte
 * of its secret (docs/design.md section 4: a credential's bytes are the
 * executor's alone): the armor line, a PEM key's Proc-Type header, and
 * of an OpenSSH key ("openssh-key-v1") its cipher name, KDF and public
 * key, which precede the private section.  The start-up checks use it
 * to find an encrypted key without a passphrase and a public_key that is
 * not the private key's half (policy/startcheck.c).
 */
#ifndef SP_POLICY_SSH_PRIVATE_KEY_H
#define SP_POLICY_SSH_PRIVATE_KEY_H

#include <stdbool.h>
#include <stddef.h>

/* A public key blob; far above any real one (RSA 16384: about 2 KiB). */
#define SSH_KEY_BLOB_MAX 16384
#define SSH_CIPHER_NAME_MAX 64

enum ssh_key_format {
	SSH_KEY_UNKNOWN,	/* no armor line sp knows: nothing said */
	SSH_KEY_OPENSSH,	/* -----BEGIN OPENSSH PRIVATE KEY----- */
	SSH_KEY_PEM,		/* RSA, EC, DSA or PKCS#8 PEM */
};

/* Caller-owned; filled by ssh_private_key_head(). */
struct ssh_key_head {
	enum ssh_key_format format;
	bool encrypted;
	char cipher[SSH_CIPHER_NAME_MAX + 1];	/* OpenSSH; "" for PEM */
	unsigned char blob[SSH_KEY_BLOB_MAX];	/* OpenSSH: the public key */
	size_t blob_len;
};

/*
 * Reads fd (at offset 0) only as far as the public parts above reach,
 * and at most one byte of a file that starts with no known armor line.
 * false, why filled, when the file has an OpenSSH armor line but not the
 * structure behind it (truncated, not base64, another magic).
 */
bool ssh_private_key_head(int fd, struct ssh_key_head *head, char *why,
    size_t why_size);

#endif
