"""JSON-RPC 2.0 lines as the client writes them, and read back."""
import json


def request(rid, method, params=None):
    msg = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return (json.dumps(msg) + "\n").encode()


INITIALIZE = request(0, "initialize", {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "proc-test", "version": "1"}})
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


def call(rid, name="get_item", arguments=None):
    """A tools/call line; by default get_item of id 42."""
    return request(rid, "tools/call", {
        "name": name,
        "arguments": {"id": "42"} if arguments is None else arguments})


def item_calls(n, tool="get_item", first_id=1, args=None):
    """INITIALIZE then n tools/call lines of tool, ids first_id..; the
    arguments args(id), by default those of get_and_put_item_policy's
    tools (an id, a card number, a count)."""
    data = INITIALIZE
    for i in range(first_id, first_id + n):
        a = args(i) if args else {"id": "item-%d" % i,
                                  "card": "4111-0000-%04d" % i, "n": i}
        data += request(i, "tools/call", {"name": tool, "arguments": a})
    return data


def cancel(rid):
    """notifications/cancelled for rid."""
    return (json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": rid, "reason": "user"}}) +
            "\n").encode()


def messages(out):
    return [json.loads(l) for l in out.split(b"\n") if l]


def responses(out):
    """{id: result or error} of the JSON-RPC lines in out."""
    got = {}
    for line in out.split(b"\n"):
        if line.strip():
            msg = json.loads(line)
            got[msg.get("id")] = msg.get("result", msg.get("error"))
    return got


def outcome(result):
    """structuredContent.outcome of a tools/call result."""
    return (result or {}).get("structuredContent", {}).get("outcome")


def structured(answer):
    """structuredContent of a Session.wait answer, {} when absent."""
    if answer is None:
        return {}
    return answer[0].get("result", {}).get("structuredContent", {})


def strings(node):
    """Every string inside a decoded JSON value, depth first."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for v in node.values():
            yield from strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from strings(v)


def only_protocol(out):
    """Each line of out is one JSON-RPC 2.0 object; returns the bad one."""
    for line in out.split(b"\n")[:-1]:
        try:
            msg = json.loads(line)
        except ValueError:
            return line
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            return line
    if not out.endswith(b"\n") and out:
        return out.split(b"\n")[-1]
    return None


def first_bad_line(out, expect_lines=None):
    """None when out is only JSON-RPC 2.0 lines (and, if given, exactly
    expect_lines of them); else a description quoting the first offending
    line as raw bytes."""
    lines = out.split(b"\n")
    if out and not out.endswith(b"\n"):
        return "unterminated last line: %r" % lines[-1]
    lines = lines[:-1]
    for i, line in enumerate(lines, 1):
        try:
            msg = json.loads(line.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return "line %d is not JSON: %r" % (i, line)
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            return "line %d is not JSON-RPC 2.0: %r" % (i, line)
    if expect_lines is not None and len(lines) != expect_lines:
        return "%d lines, expected %d: %r" % (len(lines), expect_lines,
                                             lines[expect_lines:] or lines)
    return None


def start_refusal(out, rid=0):
    """The message of the one JSON-RPC error a session that cannot start
    answers its client's first request with (broker/start_refusal.h), or
    None when out is anything else."""
    lines = out.split(b"\n")
    if len(lines) != 2 or lines[1] != b"":
        return None
    try:
        msg = json.loads(lines[0])
    except ValueError:
        return None
    err = msg.get("error") if isinstance(msg, dict) else None
    if (msg.get("jsonrpc") != "2.0" or msg.get("id") != rid or
            set(msg) != {"jsonrpc", "id", "error"} or
            not isinstance(err, dict) or err.get("code") != -32000 or
            set(err) != {"code", "message"}):
        return None
    text = err.get("message")
    if not isinstance(text, str) or not text.startswith(
            "Sallyport cannot start: "):
        return None
    return text
