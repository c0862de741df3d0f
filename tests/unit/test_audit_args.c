#include "config.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/audit_args.h"
#include "audit/audit_log.h"
#include "audit/audit_verify.h"
#include "common/value.h"
#include "policy/constraint.h"
#include "policy/policy.h"
#include "tests/unit/audit_fixture.h"

#define ELLIPSIS "\xe2\x80\xa6"

static struct policy_param
param(const char *name, enum param_type type, enum param_audit audit)
{
	struct policy_param p;

	memset(&p, 0, sizeof(p));
	p.name = (char *)name;
	p.type = type;
	p.audit = audit;
	return p;
}

static struct value
str(const char *s)
{
	struct value v = { 0 };

	cr_assert(value_set_string(&v, s, strlen(s)));
	return v;
}

/* The rendering as compact JSON text, for exact comparison. */
static char *
render(const struct policy_param *p, const struct value *v)
{
	cJSON *item = audit_arg_render(p, v);
	char *text;

	cr_assert_not_null(item);
	text = cJSON_PrintUnformatted(item);
	cJSON_Delete(item);
	return text;
}

static void
expect(const struct policy_param *p, const struct value *v, const char *want)
{
	char *got = render(p, v);

	cr_assert_str_eq(got, want);
	free(got);
}

Test(audit_args, shape_counts_characters_not_bytes)
{
	struct policy_param p = param("note", PARAM_STRING, PARAM_AUDIT_SHAPE);
	struct value v = str("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x94\x91 \"$(id)\"\n");

	expect(&p, &v, "\"string(18)\"");
	value_free(&v);
	v = str("");
	expect(&p, &v, "\"string(0)\"");
	value_free(&v);
}

Test(audit_args, shape_of_other_types_hides_the_value)
{
	struct policy_param pi = param("n", PARAM_INTEGER, PARAM_AUDIT_SHAPE);
	struct policy_param pb = param("b", PARAM_BOOLEAN, PARAM_AUDIT_SHAPE);
	struct policy_param pd = param("d", PARAM_DECIMAL, PARAM_AUDIT_SHAPE);
	struct value vi = { .kind = VALUE_INTEGER, .u.integer = 4242 };
	struct value vb = { .kind = VALUE_BOOLEAN, .u.boolean = true };
	struct value vd = { .kind = VALUE_DECIMAL, .u.decimal_minor = 1999 };
	struct value absent = { .kind = VALUE_ABSENT };

	expect(&pi, &vi, "\"integer\"");
	expect(&pb, &vb, "\"boolean\"");
	expect(&pd, &vd, "\"decimal\"");
	expect(&pi, &absent, "\"absent\"");
}

Test(audit_args, value_mode_keeps_exact_values)
{
	struct policy_param ps = param("s", PARAM_STRING, PARAM_AUDIT_VALUE);
	struct policy_param pi = param("n", PARAM_INTEGER, PARAM_AUDIT_VALUE);
	struct policy_param pb = param("b", PARAM_BOOLEAN, PARAM_AUDIT_VALUE);
	struct policy_param pd = param("d", PARAM_DECIMAL, PARAM_AUDIT_VALUE);
	struct value vs = str("a\"b\nc %2e%2e");
	struct value vi = { .kind = VALUE_INTEGER, .u.integer = INT64_MAX };
	struct value vb = { .kind = VALUE_BOOLEAN, .u.boolean = false };
	struct value vd = { .kind = VALUE_DECIMAL, .u.decimal_minor = -1205 };

	expect(&ps, &vs, "\"a\\\"b\\nc %2e%2e\"");
	expect(&pi, &vi, "9223372036854775807");
	expect(&pb, &vb, "false");
	pd.scale = 2;
	expect(&pd, &vd, "-12.05");
	pd.scale = 0;
	expect(&pd, &vd, "-1205");
	pd.scale = 18;
	vd.u.decimal_minor = INT64_MIN;
	expect(&pd, &vd, "-9.223372036854775808");
	value_free(&vs);
}

/*
 * The audit wrote decimals with a copy of constraint_format_decimal()
 * that cut the scale to 18: a value at scale 19 came out ten times too
 * large.  The loader takes 0..18 (sp-policy.5), but the one formatter
 * is exact wherever it is asked, and the audit says what the catalog
 * and the expansion say.
 */
Test(audit_args, decimals_are_the_catalogs_text_at_every_scale)
{
	struct policy_param pd = param("d", PARAM_DECIMAL, PARAM_AUDIT_VALUE);
	struct value vd = { .kind = VALUE_DECIMAL, .u.decimal_minor = INT64_MIN };
	char want[32];
	unsigned scale;

	for (scale = 0; scale <= 19; scale++) {
		pd.scale = scale;
		constraint_format_decimal(vd.u.decimal_minor, scale, want,
		    sizeof(want));
		expect(&pd, &vd, want);
	}
	expect(&pd, &vd, "-0.9223372036854775808");
	vd.u.decimal_minor = 7;
	expect(&pd, &vd, "0.0000000000000000007");
}

Test(audit_args, mask4_keeps_the_last_four_characters)
{
	struct policy_param ps = param("card", PARAM_STRING, PARAM_AUDIT_MASK4);
	struct policy_param pi = param("acct", PARAM_INTEGER, PARAM_AUDIT_MASK4);
	struct policy_param pb = param("b", PARAM_BOOLEAN, PARAM_AUDIT_MASK4);
	struct value v = str("4111 1111 1111 1234");
	struct value vi = { .kind = VALUE_INTEGER, .u.integer = -987654321 };
	struct value vb = { .kind = VALUE_BOOLEAN, .u.boolean = true };

	expect(&ps, &v, "\"" ELLIPSIS "1234\"");
	value_free(&v);
	v = str("secret-\xc3\xa9t\xc3\xa9\xe2\x82\xac");
	expect(&ps, &v, "\"" ELLIPSIS "\xc3\xa9t\xc3\xa9\xe2\x82\xac\"");
	value_free(&v);
	expect(&pi, &vi, "\"" ELLIPSIS "4321\"");
	expect(&pb, &vb, "\"boolean\"");
}

Test(audit_args, mask4_of_four_characters_or_fewer_shows_nothing)
{
	struct policy_param ps = param("pin", PARAM_STRING, PARAM_AUDIT_MASK4);
	struct value v = str("1234");

	expect(&ps, &v, "\"" ELLIPSIS "\"");
	value_free(&v);
	v = str("12345");
	expect(&ps, &v, "\"" ELLIPSIS "2345\"");
	value_free(&v);
}

Test(audit_args, value_of_another_type_is_refused)
{
	struct policy_param p = param("n", PARAM_INTEGER, PARAM_AUDIT_VALUE);
	struct value v = str("12");

	cr_assert_null(audit_arg_render(&p, &v));
	value_free(&v);
}

/*
 * A secret passed as a shaped or masked argument reaches no byte of the
 * log; the scan itself is shown to work by a value-mode control.
 */
Test(audit_args, secrets_in_shaped_or_masked_params_never_reach_the_file)
{
	const char *secret = "tok-\"s3cr3t\"\n$(cat /etc/shadow)-\xc3\xa9-9876";
	struct policy_param params[3] = {
		param("token", PARAM_STRING, PARAM_AUDIT_SHAPE),
		param("card", PARAM_STRING, PARAM_AUDIT_MASK4),
		param("echo", PARAM_STRING, PARAM_AUDIT_VALUE),
	};
	struct value values[3];
	struct audit_log *log;
	struct audit_verify_report rep;
	char dir[64], path[128], cmd[160];
	cJSON *args, *members;

	fixture_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
	values[0] = str(secret);
	values[1] = str(secret);
	values[2] = str("harmless");
	args = audit_args_render(params, values, 2);
	cr_assert_not_null(args);
	members = cJSON_CreateObject();
	cJSON_AddItemToObject(members, "args", args);
	log = audit_log_open(path, NULL, 0, "s1");
	cr_assert(audit_log_append(log, "execution", members, true));
	cJSON_Delete(members);
	cr_assert_not(fixture_file_contains_secret(path, secret));
	cr_assert_not(fixture_file_contains_secret(path, "s3cr3t"));
	cr_assert(fixture_file_contains_secret(path, "string(38)"));
	cr_assert(fixture_file_contains_secret(path, ELLIPSIS "9876"));

	/* control: the same secret in value mode is found, escaped or not */
	args = audit_args_render(&params[2], &values[0], 1);
	members = cJSON_CreateObject();
	cJSON_AddItemToObject(members, "args", args);
	cr_assert(audit_log_append(log, "execution", members, true));
	cJSON_Delete(members);
	cr_assert(fixture_file_contains_secret(path, secret));
	audit_log_close(log);
	cr_assert_eq(audit_verify_file(path, NULL, 0, &rep), AUDIT_VERIFY_OK);
	value_free(&values[0]);
	value_free(&values[1]);
	value_free(&values[2]);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}
