# Integration tests: python3 scripts (stdlib only) that start the real sp
# (or tests/sp-test, sp with the test hooks) against real peers on
# loopback -- an HTTP target with a request log, a throwaway sshd -- and
# count what reached them.  Each is named for what it proves; its
# docstring says how.  Some need root (throwaway users, namespaces) and
# are a counted TAP skip without it.
INTEGRATION_TESTS = \
	tests/integration/anchors_reach_the_journal.py \
	tests/integration/approvals_said_when_a_call_waits.py \
	tests/integration/audit_log_holds_no_secret.py \
	tests/integration/audit_rotation_between_sessions.py \
	tests/integration/audit_trail_for_a_reviewer.py \
	tests/integration/audit_verify_finds_tampering.py \
	tests/integration/calls_wait_for_the_executor_hello.py \
	tests/integration/child_stderr_relayed_with_role.py \
	tests/integration/children_refuse_memory_reads.py \
	tests/integration/confirmation_question_one_line_per_value.py \
	tests/integration/confirmation_through_input_required.py \
	tests/integration/confirmations_do_not_leak.py \
	tests/integration/confirmations_keep_stdin_read.py \
	tests/integration/credential_in_ssh_output_withheld.py \
	tests/integration/credential_symlink_refused_at_start.py \
	tests/integration/declined_challenge_is_spent.py \
	tests/integration/demo_transcript.py \
	tests/integration/duplicate_after_the_result_ring.py \
	tests/integration/each_program_links_its_own_libraries.py \
	tests/integration/executor_enforces_session_limits.py \
	tests/integration/executor_shortcuts_seen_from_outside.py \
	tests/integration/executor_trusts_no_record.py \
	tests/integration/failed_session_start_stops_calls.py \
	tests/integration/fleet_race_takes_exactly_per_day.py \
	tests/integration/fleet_state_shared_through_postgres.py \
	tests/integration/forbidden_syscall_kills_the_child.py \
	tests/integration/forged_confirmations_reach_nothing.py \
	tests/integration/help_and_version.py \
	tests/integration/hostile_elicitation_answers_act_on_nothing.py \
	tests/integration/hostile_lines_reach_nothing.py \
	tests/integration/http_actions_end_to_end.py \
	tests/integration/idempotency_journal.py \
	tests/integration/includes_follow_the_layers.py \
	tests/integration/inflight_bound_holds_frames_back.py \
	tests/integration/journal_answers_before_the_human_is_asked.py \
	tests/integration/journal_fails_closed_on_a_full_state_dir.py \
	tests/integration/killed_executor_leaves_unknown_records.py \
	tests/integration/killed_writers_leave_a_torn_tail_at_most.py \
	tests/integration/known_hosts_markers_refused.py \
	tests/integration/leading_dash_value_refused.py \
	tests/integration/limits_and_journal_compare_canonical_values.py \
	tests/integration/long_session_heap_stays_flat.py \
	tests/integration/lost_client_ends_the_session.py \
	tests/integration/make_install_and_rotation.py \
	tests/integration/mcp_2026_on_raw_frames.py \
	tests/integration/mcp_surface_as_a_client_sees_it.py \
	tests/integration/metrics_from_the_shared_state.py \
	tests/integration/metrics_hold_at_their_bounds.py \
	tests/integration/metrics_match_the_audit_log.py \
	tests/integration/metadata_stays_closed_with_link_local.py \
	tests/integration/min_interval_shared_through_state_dir.py \
	tests/integration/no_intent_no_action.py \
	tests/integration/one_killed_process_ends_the_session.py \
	tests/integration/operator_approval_as_shipped.py \
	tests/integration/operator_approval_by_another_person.py \
	tests/integration/patterns_bounded.py \
	tests/integration/peerless_socket_and_run_as.py \
	tests/integration/per_day_shared_through_state_dir.py \
	tests/integration/policy_comments_change_nothing.py \
	tests/integration/product_programs_hold_no_test_hooks.py \
	tests/integration/profile_chosen_by_peer.py \
	tests/integration/question_shows_what_is_sent.py \
	tests/integration/reflected_credential_withheld.py \
	tests/integration/reflected_forms_withheld.py \
	tests/integration/refused_calls_spend_the_budget.py \
	tests/integration/results_sanitized_and_cut.py \
	tests/integration/retyped_value_compared_canonically.py \
	tests/integration/session_records_and_verify.py \
	tests/integration/sessions_share_one_audit_log.py \
	tests/integration/shared_state_down_fails_closed.py \
	tests/integration/shared_state_password_file.py \
	tests/integration/shared_state_refused_at_start.py \
	tests/integration/shared_state_requirepeer.py \
	tests/integration/socket_admits_its_group_only.py \
	tests/integration/sp_call_makes_one_call.py \
	tests/integration/sp_check_dump_fills_defaults.py \
	tests/integration/sp_check_examples_and_errors.py \
	tests/integration/sp_check_runs_the_start_checks.py \
	tests/integration/sp_connect_adds_no_byte.py \
	tests/integration/sp_connect_relays_unchanged.py \
	tests/integration/sp_log_level_reaches_every_process.py \
	tests/integration/sp_man_page_matches_code.py \
	tests/integration/sp_policy_man_page_covers_keys.py \
	tests/integration/ssh_actions_end_to_end.py \
	tests/integration/ssh_outcomes_when_things_break.py \
	tests/integration/state_dir_lock_decides_one_at_a_time.py \
	tests/integration/state_files_of_another_user_refused.py \
	tests/integration/stderr_shared_with_stdout.py \
	tests/integration/systemd_units_verify.py \
	tests/integration/three_processes_start_and_end.py \
	tests/integration/tool_limits_and_duplicates_in_memory.py \
	tests/integration/umask_077_for_every_process.py \
	tests/integration/unpermitted_records_are_fatal.py \
	tests/integration/unread_stdout_stops_reading.py \
	tests/policy_catalog.py
TESTS += $(INTEGRATION_TESTS)
EXTRA_DIST += $(INTEGRATION_TESTS)

# The harness every integration test shares; the tests find it next to
# themselves, in the srcdir.
EXTRA_DIST += tests/integration/sptest/__init__.py \
	tests/integration/sptest/audit.py \
	tests/integration/sptest/confirm.py \
	tests/integration/sptest/mcp.py \
	tests/integration/sptest/policy.py \
	tests/integration/sptest/postgres.py \
	tests/integration/sptest/procfs.py \
	tests/integration/sptest/prom.py \
	tests/integration/sptest/run.py \
	tests/integration/sptest/sshd.py \
	tests/integration/sptest/tap.py \
	tests/integration/sptest/target.py \
	tests/integration/http_target.py tests/integration/front_target.py
