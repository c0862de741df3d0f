/*
 * The clear parts of an SSH private key file (policy/ssh_private_key.h).
 * Every read is one byte, and the base64 body is decoded a group of four
 * characters at a time only as far as the public key's end, so no
 * character of the private section is ever read.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/base64.h"
#include "policy/ssh_private_key.h"

#define ARMOR_MAX 64
#define KDF_OPTIONS_MAX 1024	/* bcrypt's are 24 bytes */
#define OPENSSH_MAGIC "openssh-key-v1"	/* and its NUL: 15 bytes */
#define OPENSSH_ARMOR "-----BEGIN OPENSSH PRIVATE KEY-----"

static const char *const armors[] = {
	OPENSSH_ARMOR,
	"-----BEGIN RSA PRIVATE KEY-----",
	"-----BEGIN EC PRIVATE KEY-----",
	"-----BEGIN DSA PRIVATE KEY-----",
	"-----BEGIN PRIVATE KEY-----",
	"-----BEGIN ENCRYPTED PRIVATE KEY-----",
	NULL,
};

static bool
read_byte(int fd, char *c)
{
	ssize_t r;

	while ((r = read(fd, c, 1)) == -1 && errno == EINTR)
		;
	return r == 1;
}

/* One of armors[] read a byte at a time, stopping at the first byte that
 * fits none; its index, or -1. */
static int
read_armor(int fd)
{
	char line[ARMOR_MAX + 1];
	size_t n = 0;
	int i, prefix_of;

	while (n < ARMOR_MAX && read_byte(fd, &line[n])) {
		line[++n] = '\0';
		for (i = 0, prefix_of = -1; armors[i] != NULL; i++) {
			if (strcmp(armors[i], line) == 0)
				return i;
			if (strncmp(armors[i], line, n) == 0)
				prefix_of = i;
		}
		if (prefix_of == -1)
			return -1;
	}
	return -1;
}

/* The end of the armor line: "\n" or "\r\n". */
static bool
read_line_end(int fd)
{
	char c;

	if (!read_byte(fd, &c))
		return false;
	return c == '\n' || (c == '\r' && read_byte(fd, &c) && c == '\n');
}

/* A PEM key's first header line, if it is "Proc-Type: 4,ENCRYPTED".  The
 * first nine characters of a body line encode under seven bytes of DER
 * structure, never a key's secret. */
static bool
pem_encrypted(int fd)
{
	static const char tag[] = "Proc-Type:";
	char line[ARMOR_MAX + 1];
	size_t n = 0;

	while (n < sizeof(tag) - 1 && read_byte(fd, &line[n]) &&
	    line[n] == tag[n])
		n++;
	if (n < sizeof(tag) - 1)
		return false;
	for (n = 0; n < ARMOR_MAX && read_byte(fd, &line[n]) &&
	    line[n] != '\n'; n++)
		;
	line[n] = '\0';
	return strstr(line, "ENCRYPTED") != NULL;
}

/* The base64 body, decoded on demand. */
struct body {
	int fd;
	unsigned char left[3];	/* decoded, not yet taken */
	size_t left_len;
};

/* Decodes the next four base64 characters, skipping line ends. */
static bool
body_quad(struct body *b)
{
	char quad[4];
	size_t n = 0, got;

	while (n < 4) {
		if (!read_byte(b->fd, &quad[n]))
			return false;
		if (quad[n] != '\n' && quad[n] != '\r')
			n++;
	}
	if (!base64_decode(quad, 4, b->left, sizeof(b->left), &got) ||
	    got != 3)
		return false;
	b->left_len = 3;
	return true;
}

/* The next n bytes into dst (NULL: skipped). */
static bool
body_take(struct body *b, unsigned char *dst, size_t n)
{
	size_t k;

	while (n > 0) {
		if (b->left_len == 0 && !body_quad(b))
			return false;
		k = n < b->left_len ? n : b->left_len;
		if (dst != NULL) {
			memcpy(dst, b->left + 3 - b->left_len, k);
			dst += k;
		}
		b->left_len -= k;
		n -= k;
	}
	return true;
}

/* An SSH string's length, within max. */
static bool
body_length(struct body *b, size_t max, size_t *len)
{
	unsigned char be[4];
	uint32_t v;

	if (!body_take(b, be, sizeof(be)))
		return false;
	v = (uint32_t)be[0] << 24 | (uint32_t)be[1] << 16 |
	    (uint32_t)be[2] << 8 | be[3];
	*len = v;
	return v <= max;
}

static bool
openssh_head(int fd, struct ssh_key_head *h, char *why, size_t why_size)
{
	struct body b = { .fd = fd };
	unsigned char magic[sizeof(OPENSSH_MAGIC)];
	char kdf[SSH_CIPHER_NAME_MAX];
	size_t len, keys;

	if (!body_take(&b, magic, sizeof(magic)) ||
	    memcmp(magic, OPENSSH_MAGIC, sizeof(magic)) != 0) {
		snprintf(why, why_size, "has an OpenSSH armor line but no "
		    "openssh-key-v1 key behind it");
		return false;
	}
	if (!body_length(&b, SSH_CIPHER_NAME_MAX, &len) ||
	    !body_take(&b, (unsigned char *)h->cipher, len) ||
	    !body_length(&b, sizeof(kdf), &len) ||
	    !body_take(&b, (unsigned char *)kdf, len) ||
	    !body_length(&b, KDF_OPTIONS_MAX, &len) ||
	    !body_take(&b, NULL, len) ||
	    !body_length(&b, UINT32_MAX, &keys) || keys != 1 ||
	    !body_length(&b, SSH_KEY_BLOB_MAX, &h->blob_len) ||
	    !body_take(&b, h->blob, h->blob_len)) {
		snprintf(why, why_size, "is not a whole OpenSSH private key "
		    "(cut short, or not one key)");
		return false;
	}
	h->encrypted = strcmp(h->cipher, "none") != 0;
	return true;
}

bool
ssh_private_key_head(int fd, struct ssh_key_head *h, char *why,
    size_t why_size)
{
	int armor;

	memset(h, 0, sizeof(*h));
	why[0] = '\0';
	if ((armor = read_armor(fd)) == -1)
		return true;
	if (!read_line_end(fd))
		return true;
	if (strcmp(armors[armor], OPENSSH_ARMOR) == 0) {
		h->format = SSH_KEY_OPENSSH;
		return openssh_head(fd, h, why, why_size);
	}
	h->format = SSH_KEY_PEM;
	h->encrypted = strstr(armors[armor], "ENCRYPTED") != NULL ||
	    pem_encrypted(fd);
	return true;
}
