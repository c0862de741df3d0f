# Human confirmation (docs/design.md section 8): the official SDK clients
# asking a human (elicitation/create, and input_required on 2026-07-28),
# a modern session's tampered requestState, and a compromised frontend's
# forged answers through tests/sp-test's hooks; out-of-band approval by
# throwaway users through sp approve (as root); each counts what reached
# a real HTTP target.
CONFIRM_TESTS = tests/sdk/sdk_confirm.mjs \
	tests/integration/forged_confirmations_reach_nothing.py \
	tests/integration/confirmation_through_input_required.py \
	tests/integration/confirmations_keep_stdin_read.py \
	tests/integration/confirmations_do_not_leak.py \
	tests/integration/confirmation_question_one_line_per_value.py \
	tests/integration/retyped_value_compared_canonically.py \
	tests/integration/hostile_elicitation_answers_act_on_nothing.py \
	tests/integration/operator_approval_by_another_person.py
TESTS += $(CONFIRM_TESTS)
EXTRA_DIST += $(CONFIRM_TESTS) tests/integration/confirm_lib.py

# `make bench-confirm` (also under `make bench`): a confirmed call beside
# an unconfirmed one, end to end; printed, not asserted.
bench-confirm: sp
	SP_BIN='$(abs_top_builddir)/sp' SP_SRCDIR='$(abs_top_srcdir)' \
	SP_BUILDDIR='$(abs_top_builddir)' \
	python3 $(abs_top_srcdir)/tests/bench/confirm_bench.py
bench: bench-confirm
EXTRA_DIST += tests/bench/confirm_bench.py
.PHONY: bench-confirm
