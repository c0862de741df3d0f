/*
 * libFuzzer target: one audit log line, as the verifier and the writer's
 * tail re-read parse it.  Any input must end in one of the three parse
 * results without a crash, leak or overread.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "common/audit_chain.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct audit_record rec;

	if (audit_chain_parse((const char *)data, size, &rec) == AUDIT_PARSE_OK)
		(void)audit_chain_hmac_ok(&rec, (const uint8_t *)"k", 1);
	return 0;
}
