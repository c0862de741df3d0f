/*
 * expand_ssh_command: each argv element becomes one single-quoted shell
 * word, checked by quoting rules and by running the result through real
 * shells (sh, bash, dash, fish when installed).  The HTTP expansions and
 * the loaded-policy pipeline are in test_policy_expand.c.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "policy/expand.h"
#include "tests/unit/policy_fixture.h"

#define WHY_SIZE 256

static char *
command_of(const struct policy_tool *t, struct value *v)
{
	struct policy_buf b;
	char why[WHY_SIZE];

	policy_buf_init(&b, 1 << 20);
	cr_assert(expand_ssh_command(t, v, &b, why, sizeof(why)), "%s", why);
	return policy_buf_steal(&b, NULL);
}

Test(expand, ssh_argv_elements_are_single_quoted_words)
{
	struct value v[2] = { 0 };
	char *s;

	cr_assert(fixture_set_string(&v[0], "'; rm -rf / #"));
	s = command_of(fixture_tool(FIXTURE_RUN_ECHO), v);
	cr_assert_str_eq(s, "'printf' '%s'\\\\'n' ''\\''; rm -rf / #' 'xy'",
	    "absent b inside a word expands to nothing");
	free(s);
	cr_assert(fixture_set_string(&v[1], "$(id)"));
	s = command_of(fixture_tool(FIXTURE_RUN_ECHO), v);
	cr_assert_str_eq(s, "'printf' '%s'\\\\'n' ''\\''; rm -rf / #' 'x$(id)y'");
	free(s);
	cr_assert(fixture_set_string(&v[0], ""));
	s = command_of(fixture_tool(FIXTURE_RUN_ECHO), v);
	cr_assert_str_eq(s, "'printf' '%s'\\\\'n' '' 'x$(id)y'", "empty is a word");
	free(s);
	value_free(&v[0]);
	value_free(&v[1]);
}

/* Review F5: no backslash is ever left inside single quotes. */
Test(expand, a_backslash_is_written_outside_the_quotes)
{
	static const char *cases[][2] = {
		{ "x\\", "'x'\\\\''" },
		{ "\\'", "''\\\\''\\'''" },
		{ "a\\\\b", "'a'\\\\''\\\\'b'" },
		{ "\xe6\x97\xa5\\n", "'\xe6\x97\xa5'\\\\'n'" },
	};
	struct policy_buf b;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		policy_buf_init(&b, 256);
		cr_assert(expand_shell_quote(cases[i][0], strlen(cases[i][0]),
		    &b));
		cr_assert(policy_buf_append(&b, "", 0));
		cr_assert_str_eq(b.data, cases[i][1], "case %zu", i);
		policy_buf_free(&b);
	}
}

/* printf '<%s>' {a} {b} pre-{a}-post: each word shows up bracketed. */
static struct policy_param shell_params[] = {
	{ .name = "a", .type = PARAM_STRING, .required = true,
	  .max_length = 100000 },
	{ .name = "b", .type = PARAM_STRING, .required = true,
	  .max_length = 100000 },
};
static struct policy_template_part sh_printf[] = {
	{ .literal = "printf", .literal_len = 6 } };
static struct policy_template_part sh_format[] = {
	{ .literal = "<%s>", .literal_len = 4 } };
static struct policy_template_part sh_a[] = {
	{ .is_param = true, .param_index = 0 } };
static struct policy_template_part sh_b[] = {
	{ .is_param = true, .param_index = 1 } };
static struct policy_template_part sh_mixed[] = {
	{ .literal = "pre-", .literal_len = 4 },
	{ .is_param = true, .param_index = 0 },
	{ .literal = "-post", .literal_len = 5 } };
static struct policy_template shell_argv[] = {
	{ sh_printf, 1 }, { sh_format, 1 }, { sh_a, 1 }, { sh_b, 1 },
	{ sh_mixed, 3 },
};
static const struct policy_tool shell_tool = {
	.name = "echo_words", .kind = TOOL_SSH,
	.ssh = { .argv = shell_argv, .argc = 5 },
	.params = shell_params, .param_count = 2,
};

/*
 * Runs line with "shell -c" in dir; returns what it printed.  fish gets
 * --no-config and a HOME it cannot write, so it leaves nothing behind.
 */
static char *
run_shell(const char *shell, const char *dir, const char *line, size_t *len)
{
	struct policy_buf out;
	char chunk[4096];
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	cr_assert_eq(pipe(fds), 0);
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		if (chdir(dir) != 0 || dup2(fds[1], 1) == -1 ||
		    setenv("HOME", "/nonexistent", 1) != 0)
			_exit(127);
		close(fds[0]);
		close(fds[1]);
		if (strcmp(shell, "fish") == 0)
			execlp("fish", "fish", "--no-config", "-c", line,
			    (char *)NULL);
		else
			execl(shell, shell, "-c", line, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	policy_buf_init(&out, 1 << 20);
	while ((n = read(fds[0], chunk, sizeof(chunk))) > 0)
		policy_buf_append(&out, chunk, (size_t)n);
	close(fds[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "%s failed (status %d) on: %s", shell, status, line);
	return policy_buf_steal(&out, len);
}

static size_t
dir_entries(const char *dir)
{
	struct dirent *d;
	size_t n = 0;
	DIR *dp = opendir(dir);

	cr_assert_not_null(dp);
	while ((d = readdir(dp)) != NULL)
		n += strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0;
	closedir(dp);
	return n;
}

Test(expand, hostile_words_reach_a_real_shell_literally)
{
	static const char *hostile[][2] = {
		{ "'; touch m1; '", "$(touch m2)" },
		{ "`touch m3`", "\"; touch m4 #" },
		{ "a\ntouch m5\n", "${IFS}x;touch${IFS}m6" },
		{ "../../etc/passwd %2e%2e", "\\'\\\"'" },
		{ "\r\nX-Injected: 1", "* ? [a-z] ~ $HOME !! &" },
		{ "''''", "|touch m7|" },
		/* Review F5: fish read \' and \\ inside '...' as escapes. */
		{ "x\\", ";touch m8;echo \\" },
		{ "\\'", "\\\\'\\" },
		{ "x\\", "\" ; touch m9 ; echo \\\"" },
	};
	static const char *const shells[] = { "/bin/sh", "fish" };
	size_t k;
	char dir[] = "/tmp/sp-expand-XXXXXX", *line, *got, expect[512];
	struct value v[2] = { 0 };
	size_t i, len;

	cr_assert_not_null(mkdtemp(dir));
	for (i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		cr_assert(fixture_set_string(&v[0], hostile[i][0]));
		cr_assert(fixture_set_string(&v[1], hostile[i][1]));
		line = command_of(&shell_tool, v);
		snprintf(expect, sizeof(expect), "<%s><%s><pre-%s-post>",
		    hostile[i][0], hostile[i][1], hostile[i][0]);
		for (k = 0; k < sizeof(shells) / sizeof(shells[0]); k++) {
			got = run_shell(shells[k], dir, line, &len);
			cr_assert_eq(len, strlen(expect), "%s case %zu: %s",
			    shells[k], i, got);
			cr_assert_str_eq(got, expect, "%s case %zu", shells[k],
			    i);
			free(got);
		}
		free(line);
	}
	cr_assert_eq(dir_entries(dir), 0, "a marker file was created");
	cr_assert_eq(chdir("/"), 0);
	cr_assert_eq(rmdir(dir), 0);
	value_free(&v[0]);
	value_free(&v[1]);
}

Test(expand, long_multibyte_text_reaches_the_shell_whole)
{
	char dir[] = "/tmp/sp-expand-XXXXXX", *line, *got, *big, *expect;
	struct value v[2] = { 0 };
	size_t i, len;

	big = malloc(3000 * 4 + 1);
	for (i = 0; i < 3000; i++)
		memcpy(big + 4 * i, i % 2 ? "\xe6\x97\xa5'" : "\xc3\xa9'\n", 4);
	big[3000 * 4] = '\0';
	cr_assert(fixture_set_string(&v[0], big));
	cr_assert(fixture_set_string(&v[1], "\xf0\x9f\x98\x80"));
	cr_assert_not_null(mkdtemp(dir));
	line = command_of(&shell_tool, v);
	got = run_shell("/bin/sh", dir, line, &len);
	i = (size_t)asprintf(&expect, "<%s><\xf0\x9f\x98\x80><pre-%s-post>",
	    big, big);
	cr_assert_not_null(expect);
	cr_assert_eq(len, strlen(expect));
	cr_assert_eq(memcmp(got, expect, len), 0);
	cr_assert_eq(chdir("/"), 0);
	cr_assert_eq(rmdir(dir), 0);
	free(expect);
	free(got);
	free(line);
	free(big);
	value_free(&v[0]);
	value_free(&v[1]);
}


/*
 * Issue 14 finding 3: a quoted word is still an option to the remote
 * program when it starts with '-' ("ls -la", "grep -f/etc/shadow").
 */
static struct policy_param dash_params[] = {
	{ .name = "path", .type = PARAM_STRING, .required = true,
	  .max_length = 100 },
	{ .name = "n", .type = PARAM_INTEGER, .required = true },
	{ .name = "amount", .type = PARAM_DECIMAL, .required = true,
	  .scale = 2 },
	{ .name = "pre", .type = PARAM_STRING, .required = true,
	  .max_length = 100 },
};
static struct policy_template_part d_ls[] = { { .literal = "ls",
	.literal_len = 2 } };
static struct policy_template_part d_dd[] = { { .literal = "--",
	.literal_len = 2 } };
static struct policy_template_part d_opt[] = { { .literal = "--file=",
	.literal_len = 7 }, { .is_param = true, .param_index = 0 } };
static struct policy_template_part d_path[] = {
	{ .is_param = true, .param_index = 0 } };
static struct policy_template_part d_n[] = {
	{ .is_param = true, .param_index = 1 } };
static struct policy_template_part d_amount[] = {
	{ .is_param = true, .param_index = 2 } };
static struct policy_template_part d_pre_path[] = {
	{ .is_param = true, .param_index = 3 },
	{ .is_param = true, .param_index = 0 } };

/* argv: "ls", then elems (each a template); no params are opted in. */
static char *
dash_expand(const struct policy_template *elems, size_t n, struct value *v,
    bool opt_in, char *why)
{
	struct policy_template argv[8] = { { d_ls, 1 } };
	struct policy_tool tool = {
		.name = "dash", .kind = TOOL_SSH, .ssh = { argv, n + 1 },
		.params = dash_params, .param_count = 4,
	};
	struct policy_buf b;
	size_t i;

	for (i = 0; i < n; i++)
		argv[i + 1] = elems[i];
	dash_params[0].allow_leading_dash = opt_in;
	policy_buf_init(&b, 4096);
	why[0] = '\0';
	if (!expand_ssh_command(&tool, v, &b, why, WHY_SIZE)) {
		policy_buf_free(&b);
		return NULL;
	}
	return policy_buf_steal(&b, NULL);
}

static void
dash_values(struct value *v, const char *path, int64_t n, int64_t minor,
    const char *pre)
{
	cr_assert(fixture_set_string(&v[0], path));
	v[1].kind = VALUE_INTEGER;
	v[1].u.integer = n;
	v[2].kind = VALUE_DECIMAL;
	v[2].u.decimal_minor = minor;
	cr_assert(fixture_set_string(&v[3], pre));
}

static void
dash_refused(const struct policy_template *elems, size_t n, struct value *v,
    const char *param)
{
	char why[WHY_SIZE], want[WHY_SIZE];
	char *s = dash_expand(elems, n, v, false, why);

	snprintf(want, sizeof(want), "dash: %s %s", param,
	    EXPAND_LEADING_DASH_REASON);
	cr_assert_null(s, "expanded to %s", s);
	cr_assert_str_eq(why, want);
}

static void
dash_expands(const struct policy_template *elems, size_t n, struct value *v,
    bool opt_in, const char *want)
{
	char why[WHY_SIZE];
	char *s = dash_expand(elems, n, v, opt_in, why);

	cr_assert_not_null(s, "refused: %s", why);
	cr_assert_str_eq(s, want);
	free(s);
}

Test(expand, a_value_starting_with_dash_needs_double_dash_or_opt_in)
{
	const struct policy_template plain[] = { { d_path, 1 } };
	const struct policy_template after[] = { { d_dd, 1 }, { d_path, 1 } };
	const struct policy_template in_opt[] = { { d_opt, 2 } };
	static const char *const dashes[] = { "-la", "-f/etc/shadow", "--",
	    "-", "--help", "-$(touch m)" };
	struct value v[4] = { 0 };
	size_t i;

	for (i = 0; i < sizeof(dashes) / sizeof(dashes[0]); i++) {
		dash_values(v, dashes[i], 1, 1, "");
		dash_refused(plain, 1, v, "path");
	}
	dash_values(v, "-la", 1, 1, "");
	dash_expands(after, 2, v, false, "'ls' '--' '-la'");
	dash_expands(plain, 1, v, true, "'ls' '-la'");
	dash_expands(in_opt, 1, v, false, "'ls' '--file=-la'");
	/* Not an ASCII hyphen: U+2013 and a leading space are operands. */
	dash_values(v, "\xe2\x80\x93la", 1, 1, "");
	dash_expands(plain, 1, v, false, "'ls' '\xe2\x80\x93la'");
	dash_values(v, " -la", 1, 1, "");
	dash_expands(plain, 1, v, false, "'ls' ' -la'");
	dash_values(v, "la-", 1, 1, "");
	dash_expands(plain, 1, v, false, "'ls' 'la-'");
	for (i = 0; i < 4; i++)
		value_free(&v[i]);
}

Test(expand, numbers_and_joined_values_can_lead_with_dash_too)
{
	const struct policy_template n_el[] = { { d_n, 1 } };
	const struct policy_template amount_el[] = { { d_amount, 1 } };
	const struct policy_template joined[] = { { d_pre_path, 2 } };
	const struct policy_template grep[] = { { d_opt, 2 }, { d_dd, 1 },
	    { d_pre_path, 2 }, { d_n, 1 } };
	struct value v[4] = { 0 };
	size_t i;

	dash_values(v, "x", -5, 1, "");
	dash_refused(n_el, 1, v, "n");
	dash_values(v, "x", 5, -150, "");
	dash_expands(n_el, 1, v, false, "'ls' '5'");
	dash_refused(amount_el, 1, v, "amount");
	dash_values(v, "x", 5, 150, "");
	dash_expands(amount_el, 1, v, false, "'ls' '1.50'");
	/* An empty value lets the next one lead the element. */
	dash_values(v, "-la", 0, 0, "");
	dash_refused(joined, 1, v, "path");
	dash_values(v, "la", 0, 0, "-");
	dash_refused(joined, 1, v, "pre");
	dash_values(v, "-la", 0, 0, "x");
	dash_expands(joined, 1, v, false, "'ls' 'x-la'");
	/* Everything after a "--" element is an operand. */
	dash_values(v, "-f", -1, 0, "-r");
	dash_expands(grep, 4, v, false, "'ls' '--file=-f' '--' '-r-f' '-1'");
	for (i = 0; i < 4; i++)
		value_free(&v[i]);
}
