-- Sallyport's shared state on PostgreSQL, schema version 1
-- (docs/design.md section 9.2; sp-policy(5) "state"; sp(1) "sp state init").
--
-- Run by `sp state init`, in one transaction, as a role that may create
-- the schema; that role owns the tables and the functions.  Every
-- decision is one call of a SECURITY DEFINER function below, so the role
-- the sessions connect as needs only USAGE on the schema and EXECUTE on
-- its functions (`sp state init --grant ROLE`): it cannot read or rewrite
-- the tables except as these functions do.  What the database holds is
-- what state_dir's files hold: tool names, who ("uid:1001" or
-- "profile:NAME"), UTC day numbers, and SHA-256 keys in hex -- never an
-- argument value or a credential.

CREATE SCHEMA IF NOT EXISTS sallyport;

CREATE TABLE IF NOT EXISTS sallyport.meta (
	one boolean PRIMARY KEY DEFAULT true CHECK (one),
	version integer NOT NULL
);

-- per_day: calls of a tool per UTC day (ms since the epoch / 86400000).
CREATE TABLE IF NOT EXISTS sallyport.day_counts (
	who text NOT NULL,
	tool text NOT NULL,
	day bigint NOT NULL,
	spent bigint NOT NULL,
	PRIMARY KEY (who, tool, day)
);

-- min_interval_ms: the last start (wall-clock ms) of a call key.
CREATE TABLE IF NOT EXISTS sallyport.interval_starts (
	who text NOT NULL,
	tool text NOT NULL,
	key text NOT NULL,
	started_ms bigint NOT NULL,
	PRIMARY KEY (who, key)
);
CREATE INDEX IF NOT EXISTS interval_starts_expiry
	ON sallyport.interval_starts (who, tool, started_ms);

-- The idempotency journal: one row per key, the last change.
CREATE TABLE IF NOT EXISTS sallyport.journal (
	key text PRIMARY KEY CHECK (key ~ '^[0-9a-f]{64}$'),
	state text NOT NULL
	    CHECK (state IN ('pending', 'done', 'failed', 'unknown')),
	ts_ms bigint NOT NULL,
	tool text NOT NULL,
	summary text NOT NULL DEFAULT '',
	owner text NOT NULL DEFAULT '',
	call bigint NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS journal_expiry ON sallyport.journal (tool, ts_ms);

CREATE OR REPLACE FUNCTION sallyport.schema_version() RETURNS integer
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT version FROM sallyport.meta $$;

-- The functions that lock a row give up after lock_timeout (4 s, under
-- the session's own 5 s wait, state/pg.h): a decision that cannot be
-- made in time ends in the database too, rolled back, rather than commit
-- after the session refused the call.

-- One per_day / min_interval_ms decision.  The row of (who, tool, day)
-- is locked first, so two sessions deciding for the same tool and who
-- are served one after the other and never both take the last call.
-- verdict: 'pass' (counted: spent is the count with this call),
-- 'per_day' (spent calls today, none taken), or 'min_interval_ms'
-- (last_start is the identical call's start).
CREATE OR REPLACE FUNCTION sallyport.take_limits(p_who text, p_tool text,
    p_key text, p_now bigint, p_per_day integer, p_min_interval integer)
RETURNS TABLE (verdict text, spent bigint, last_start bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
SET lock_timeout = '4s'
AS $$
DECLARE
	d bigint := p_now / 86400000;
	c bigint;
	s bigint;
BEGIN
	INSERT INTO sallyport.day_counts (who, tool, day, spent)
	    VALUES (p_who, p_tool, d, 0)
	    ON CONFLICT (who, tool, day) DO NOTHING;
	SELECT t.spent INTO c FROM sallyport.day_counts t
	    WHERE t.who = p_who AND t.tool = p_tool AND t.day = d FOR UPDATE;
	IF p_min_interval > 0 THEN
		DELETE FROM sallyport.interval_starts i
		    WHERE i.who = p_who AND i.tool = p_tool
		    AND i.started_ms <= p_now - p_min_interval;
		SELECT i.started_ms INTO s FROM sallyport.interval_starts i
		    WHERE i.who = p_who AND i.key = p_key;
		IF FOUND THEN
			RETURN QUERY SELECT 'min_interval_ms'::text, c, s;
			RETURN;
		END IF;
	END IF;
	IF p_per_day > 0 AND c >= p_per_day THEN
		RETURN QUERY SELECT 'per_day'::text, c, 0::bigint;
		RETURN;
	END IF;
	UPDATE sallyport.day_counts t SET spent = c + 1
	    WHERE t.who = p_who AND t.tool = p_tool AND t.day = d;
	IF p_min_interval > 0 THEN
		INSERT INTO sallyport.interval_starts (who, tool, key, started_ms)
		    VALUES (p_who, p_tool, p_key, p_now)
		    ON CONFLICT (who, key) DO UPDATE SET started_ms = p_now;
	END IF;
	RETURN QUERY SELECT 'pass'::text, c + 1, 0::bigint;
END $$;

CREATE OR REPLACE FUNCTION sallyport.journal_peek(p_key text)
RETURNS TABLE (state text, ts_ms bigint, tool text, summary text,
    owner text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
	SELECT j.state, j.ts_ms, j.tool, j.summary, j.owner
	FROM sallyport.journal j WHERE j.key = p_key
$$;

-- The pending entry for a call, taken only when no entry gives the key
-- an answer: none, a failed one, or one whose window has passed.  true
-- when taken; false when another session's entry stands (in flight,
-- done or unknown), and the call must not be sent.
CREATE OR REPLACE FUNCTION sallyport.journal_take(p_key text, p_tool text,
    p_owner text, p_call bigint, p_now bigint, p_window_ms bigint)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
SET lock_timeout = '4s'
AS $$
DECLARE
	n integer;
BEGIN
	DELETE FROM sallyport.journal j WHERE j.tool = p_tool
	    AND j.ts_ms <= p_now - p_window_ms AND j.key <> p_key;
	INSERT INTO sallyport.journal AS j
	    (key, state, ts_ms, tool, summary, owner, call)
	    VALUES (p_key, 'pending', p_now, p_tool, '', p_owner, p_call)
	    ON CONFLICT (key) DO UPDATE SET state = 'pending', ts_ms = p_now,
	    tool = p_tool, summary = '', owner = p_owner, call = p_call
	    WHERE j.state = 'failed' OR j.ts_ms <= p_now - p_window_ms;
	GET DIAGNOSTICS n = ROW_COUNT;
	RETURN n = 1;
END $$;

-- A call's outcome, on the pending entry this session took.
CREATE OR REPLACE FUNCTION sallyport.journal_end(p_key text, p_owner text,
    p_state text, p_now bigint, p_summary text)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
SET lock_timeout = '4s'
AS $$
DECLARE
	n integer;
BEGIN
	UPDATE sallyport.journal j SET state = p_state, ts_ms = p_now,
	    summary = p_summary
	    WHERE j.key = p_key AND j.owner = p_owner AND j.state = 'pending';
	GET DIAGNOSTICS n = ROW_COUNT;
	RETURN n = 1;
END $$;

CREATE OR REPLACE FUNCTION sallyport.journal_list()
RETURNS TABLE (key text, state text, ts_ms bigint, tool text, summary text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
	SELECT j.key, j.state, j.ts_ms, j.tool, j.summary
	FROM sallyport.journal j ORDER BY j.ts_ms, j.key
$$;

-- sp journal resolve: an operator's verdict; the previous state, or
-- NULL when there is no such entry.
CREATE OR REPLACE FUNCTION sallyport.journal_resolve(p_key text,
    p_state text, p_now bigint, p_summary text)
RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
SET lock_timeout = '4s'
AS $$
DECLARE
	was text;
BEGIN
	SELECT j.state INTO was FROM sallyport.journal j
	    WHERE j.key = p_key FOR UPDATE;
	IF NOT FOUND THEN
		RETURN NULL;
	END IF;
	UPDATE sallyport.journal j SET state = p_state, ts_ms = p_now,
	    summary = p_summary, owner = ''
	    WHERE j.key = p_key;
	RETURN was;
END $$;

-- sp metrics: per_day spent on a day, by who and tool.
CREATE OR REPLACE FUNCTION sallyport.day_spent(p_day bigint)
RETURNS TABLE (who text, tool text, spent bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
	SELECT t.who, t.tool, t.spent FROM sallyport.day_counts t
	WHERE t.day = p_day ORDER BY t.tool, t.who
$$;

REVOKE ALL ON ALL FUNCTIONS IN SCHEMA sallyport FROM PUBLIC;

INSERT INTO sallyport.meta (one, version) VALUES (true, 1)
	ON CONFLICT (one) DO UPDATE SET version = 1;
