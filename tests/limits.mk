# Per-tool limits and duplicates (docs/design.md section 9), decided by
# the broker at each intent: the real sp mcp against http_target.py,
# counting what reached the target.
LIMITS_TESTS = \
	tests/integration/limits_memory.py \
	tests/integration/limits_state.py
TESTS += $(LIMITS_TESTS)
EXTRA_DIST += $(LIMITS_TESTS)
