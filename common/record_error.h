/*
 * The one error enum of the record codec and the buffer it is built on
 * (common/buf.h, common/record.h): a buffer's get and put return the
 * same values a decoder and an encoder do, so no layer translates.
 */
#ifndef SP_COMMON_RECORD_ERROR_H
#define SP_COMMON_RECORD_ERROR_H

enum record_error {
	RECORD_OK = 0,
	RECORD_ERR_SHORT,		/* ends before a field does */
	RECORD_ERR_TRAILING,		/* bytes after the last field */
	RECORD_ERR_VERSION,		/* another protocol version */
	RECORD_ERR_TYPE,		/* unknown type, or not the one expected */
	RECORD_ERR_RANGE,		/* enum, kind, flag, boolean or number out of range */
	RECORD_ERR_TOO_LONG,		/* length or count above its limit, or
					 * the buffer's maximum */
	RECORD_ERR_CHAR,		/* NUL in a text, or outside a token's alphabet */
	RECORD_ERR_INCONSISTENT,	/* fields contradict each other */
	RECORD_ERR_NOMEM,
	RECORD_ERR_READONLY,		/* a put on a reader buffer */
};

/* One line for a diagnostic; never NULL. */
const char *record_error_str(enum record_error e);

#endif
