#!/usr/bin/python3
"""A stand-in GitHub Actions runner for composite actions (action.yml).

ste's own actions (deploy/github/setup, select, record) are composite
actions: YAML that GitHub's runner turns into shell steps, cache steps and
outputs. A test that runs only their scripts misses what the YAML does
(expressions, defaults, which step runs after a failure, how outputs are
read back). This runs the action itself, the way the runner does, so tests
can assert what a workflow would see:

  /usr/bin/python3 tests/ci/actions_runner.py --action DIR/action.yml \\
      --workspace WS --context ctx.json [--with name=value ...] \\
      [--outputs out.json] [--summary summary.md]

or, from Python, `ActionRunner(context).run(action_yml, inputs)`.

The context file (JSON) holds what a job gives an action:
  github   event_name, event (the payload; also written to the file
           $GITHUB_EVENT_PATH names), sha, ref, ref_name, base_ref,
           head_ref, run_number, run_attempt, repository,
           action_repository, server_url (workspace comes from
           --workspace)
  runner   os, arch, temp, tool_cache (defaults: Linux, X64, fresh dirs)
  env      the job's env: block (optional)
  cache_dir  the folder standing in for the Actions cache
  actions  {"owner/repo/path@ref": "/local/dir", "owner/repo/path": ...}:
           where `uses:` of another repository's action is found

What follows GitHub's own code (actions/runner, read for this):
  - file commands ($GITHUB_OUTPUT, $GITHUB_ENV, $GITHUB_STATE) parsed as
    src/Runner.Worker/FileCommandManager.cs EnvFileKeyValuePairs does,
    including its quirks (below, read_file_command);
  - $GITHUB_PATH as AddPathFileCommand; $GITHUB_STEP_SUMMARY refused over
    1 MiB (an error annotation, the step's summary dropped, the step not
    failed), as CreateStepSummaryCommand;
  - workflow commands on a step's stdout/stderr (`::set-output ...::`,
    `##[set-output ...]`, `::stop-commands::TOKEN`) as
    ActionCommandManager/ActionCommand: set-output still works there, so
    a printed line can set an output unless the step stopped commands;
  - expressions as src/Sdk/DTExpressions2 (lexer, coercions, functions);
  - `if:` without a status function means `success() && (...)`.
Where this is stricter than GitHub (an error rather than a warning):
a `required` input that is missing, an unknown `uses:`.

Only the standard library and python3-yaml.
"""

import argparse
import copy
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import uuid

import yaml

# GitHub's limit on one step's summary (CreateStepSummaryCommand).
STEP_SUMMARY_LIMIT = 1024 * 1024


class ActionError(Exception):
    """The action cannot be run as written (bad YAML, bad expression...)."""


class FileCommandError(Exception):
    """A file command the runner would refuse (it fails the step)."""


class ExpressionError(ActionError):
    pass


# ---------------------------------------------------------------------------
# File commands: $GITHUB_OUTPUT, $GITHUB_ENV, $GITHUB_STATE
# ---------------------------------------------------------------------------

def _read_line(text, index, windows):
    """(line, newline, next index) as the runner's ReadLine: only "\\n"
    ends a line on Linux ("\\r\\n" only on Windows runners), so on Linux a
    CR stays in the line and in the value. None at the end of the text."""
    if index >= len(text):
        return None, None, index
    lf = text.find("\n", index)
    if lf < 0:
        return text[index:], None, len(text)
    if windows:
        crlf = text.find("\r\n", index)
        if 0 <= crlf < lf:
            return text[index:crlf], "\r\n", crlf + 2
    return text[index:lf], "\n", lf + 1


def read_file_command(text, windows=False):
    """Yields (name, value) for each entry, in file order, as
    EnvFileKeyValuePairs: NAME=VALUE or NAME<<DELIMITER, decided by which
    of "=" and "<<" comes first on the line; a heredoc value ends at the
    first line equal to the delimiter (its last newline not part of it).

    Raises FileCommandError where the runner throws: a heredoc with no
    name or no delimiter, a missing closing delimiter, a value line at the
    end of the file without its newline, a line with neither "=" nor
    "<<". Entries before the error have been yielded (the runner applies
    them: its enumerator is lazy), which a caller must keep.

    Quirk kept: "=VALUE" (an empty name) is not refused: the runner's
    check tests the whole line, not the name."""
    index = 0
    line, _, index = _read_line(text, index, windows)
    while line is not None:
        if line != "":
            equals = line.find("=")
            heredoc = line.find("<<")
            if equals >= 0 and (heredoc < 0 or equals < heredoc):
                name, value = line.split("=", 1)
            elif heredoc >= 0 and (equals < 0 or heredoc < equals):
                name, delimiter = line.split("<<", 1)
                if name == "" or delimiter == "":
                    raise FileCommandError(
                        "Invalid format '%s'. Name must not be empty and delimiter must not be empty" % line)
                start = end = index
                temp, newline, index = _read_line(text, index, windows)
                while temp != delimiter:
                    if temp is None:
                        raise FileCommandError("Invalid value. Matching delimiter not found '%s'" % delimiter)
                    if newline is None:
                        raise FileCommandError("Invalid value. EOF marker missing new line.")
                    end = index - len(newline)
                    temp, newline, index = _read_line(text, index, windows)
                value = text[start:end] if end > start else ""
            else:
                raise FileCommandError("Invalid format '%s'" % line)
            yield name, value
        line, _, index = _read_line(text, index, windows)


def read_path_lines(text):
    """$GITHUB_PATH lines as File.ReadAllLines gives them (any of \\r\\n,
    \\n, \\r ends a line), empty ones skipped."""
    return [line for line in re.split(r"\r\n|\n|\r", text) if line != ""]


def decode_file(data):
    """File bytes as the runner's File.ReadAllText (UTF-8, invalid bytes
    replaced by U+FFFD, a BOM dropped)."""
    text = data.decode("utf-8", errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


# ---------------------------------------------------------------------------
# Workflow commands on stdout/stderr (ActionCommand, ActionCommandManager)
# ---------------------------------------------------------------------------

# Every command the runner registers: a line naming another is plain text.
REGISTERED_COMMANDS = {
    "add-mask", "add-path", "set-env", "set-output", "save-state", "add-matcher",
    "remove-matcher", "warning", "error", "notice", "debug", "group", "endgroup", "echo",
    "stop-commands",
}


def _unescape(text, mappings):
    for token, replacement in mappings:
        text = text.replace(replacement, token)
    return text


_V1_ESCAPES = [(";", "%3B"), ("\r", "%0D"), ("\n", "%0A"), ("]", "%5D"), ("%", "%25")]
_V2_DATA_ESCAPES = [("\r", "%0D"), ("\n", "%0A"), ("%", "%25")]
_V2_PROPERTY_ESCAPES = [("\r", "%0D"), ("\n", "%0A"), (":", "%3A"), (",", "%2C"), ("%", "%25")]


def parse_workflow_command(line, registered):
    """(command, properties, data) or None, as ActionCommand.TryParseV2
    ("::cmd k=v,k=v::data" after leading white space) and then TryParse
    ("##[cmd k=v;k=v]data" anywhere in the line)."""
    message = line.lstrip()
    if message.startswith("::"):
        end = message.find("::", 2)
        if end >= 0:
            info = message[2:end]
            name = info.split(" ", 1)[0]
            if name in registered:
                props = {}
                if " " in info:
                    for prop in info.split(" ", 1)[1].strip().split(","):
                        pair = [p for p in prop.split("=", 1) if p != ""]
                        if len(pair) == 2:
                            props[pair[0]] = _unescape(pair[1], _V2_PROPERTY_ESCAPES)
                return name, props, _unescape(message[end + 2:], _V2_DATA_ESCAPES)
    prefix = line.find("##[")
    if prefix >= 0:
        rb = line.find("]", prefix)
        if rb >= 0:
            info = line[prefix + 3:rb]
            name = info.split(" ", 1)[0]
            if name in registered:
                props = {}
                if " " in info:
                    for prop in info.split(" ", 1)[1].split(";"):
                        pair = [p for p in prop.split("=", 1) if p != ""]
                        if len(pair) == 2:
                            props[pair[0]] = _unescape(pair[1], _V1_ESCAPES)
                return name, props, _unescape(line[rb + 1:], _V1_ESCAPES)
    return None


class WorkflowCommands:
    """One step's command processing: the runner makes a command manager
    per step, so `::stop-commands::` lasts until its token or the step's
    end."""

    def __init__(self, step_result):
        self.step = step_result
        self.registered = set(REGISTERED_COMMANDS)
        self.stop_token = None

    def line(self, text):
        command = parse_workflow_command(text, self.registered)
        if command is None:
            return
        name, props, data = command
        if self.stop_token is not None:
            if name.lower() == self.stop_token.lower():
                self.registered.discard(self.stop_token)
                self.stop_token = None
            return
        if name == "stop-commands":
            if data == "" or data in self.registered or data.lower() == "pause-logging":
                self.step.fail("stop-commands with an unsupported token '%s'" % data)
                return
            self.stop_token = data
            self.registered.add(data)
        elif name == "set-output":
            if not props.get("name"):
                self.step.fail("Required field 'name' is missing in ##[set-output] command.")
                return
            self.step.outputs[props["name"]] = data
        elif name in ("set-env", "add-path"):
            # Disabled on GitHub since 2020: the command fails the step.
            self.step.fail("The `%s` command is disabled." % name)
        elif name in ("error", "warning", "notice"):
            self.step.annotations.append((name, data))


# ---------------------------------------------------------------------------
# Expressions (src/Sdk/DTExpressions2)
# ---------------------------------------------------------------------------

class FilteredArray(list):
    """What `*` gives: a later `.name` applies to each element."""


_KEYWORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_BOUNDARY = set("()[],.!><=&|")


def parse_number(text):
    """A string as a number, as ExpressionUtility.ParseNumber: trimmed;
    '' is 0; decimal with sign/point/exponent; 0x hex and 0o octal (32-bit);
    Infinity, -Infinity; anything else NaN."""
    text = (text or "").strip()
    if text == "":
        return 0.0
    if _NUMBER.match(text):
        return float(text)
    for prefix, digits, base in (("0x", "0123456789abcdefABCDEF", 16), ("0o", "01234567", 8)):
        if len(text) > 2 and text.startswith(prefix) and all(c in digits for c in text[2:]):
            value = int(text[2:], base)
            if value <= 0x7FFFFFFF:
                return float(value)
            if base == 16 and value <= 0xFFFFFFFF:
                return float(value - (1 << 32))  # Int32.TryParse of a hex bit pattern
            return float("nan")
    if text == "Infinity":
        return math.inf
    if text == "-Infinity":
        return -math.inf
    return float("nan")


def kind_of(value):
    if value is None:
        return "Null"
    if isinstance(value, bool):
        return "Boolean"
    if isinstance(value, (int, float)):
        return "Number"
    if isinstance(value, str):
        return "String"
    if isinstance(value, list):
        return "Array"
    if isinstance(value, dict):
        return "Object"
    raise ExpressionError("a value of type %s" % type(value).__name__)


def is_primitive(value):
    return kind_of(value) in ("Null", "Boolean", "Number", "String")


def number_to_string(number):
    """A number as .NET's ToString("G15"): 15 significant digits, exponent
    form like 1E+15 when shorter."""
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    return format(float(number), ".15G")


def to_string(value):
    """EvaluationResult.ConvertToString: arrays and objects are 'Array' and
    'Object'."""
    kind = kind_of(value)
    if kind == "Null":
        return ""
    if kind == "Boolean":
        return "true" if value else "false"
    if kind == "Number":
        return number_to_string(value)
    if kind == "String":
        return value
    return kind


def to_number(value):
    kind = kind_of(value)
    if kind == "Null":
        return 0.0
    if kind == "Boolean":
        return 1.0 if value else 0.0
    if kind == "Number":
        return float(value)
    if kind == "String":
        return parse_number(value)
    return float("nan")


def is_truthy(value):
    kind = kind_of(value)
    if kind == "Null":
        return False
    if kind == "Boolean":
        return value
    if kind == "Number":
        return not (value == 0 or math.isnan(value))
    if kind == "String":
        return value != ""
    return True


def _coerce(left, right):
    """CoerceTypes: number vs string compare as numbers; a boolean or null
    on either side becomes a number first; other mixes stay apart."""
    lk, rk = kind_of(left), kind_of(right)
    if lk == rk:
        return left, right, lk, rk
    if lk == "Number" and rk == "String":
        return left, parse_number(right), lk, "Number"
    if lk == "String" and rk == "Number":
        return parse_number(left), right, "Number", rk
    if lk in ("Boolean", "Null"):
        return _coerce(to_number(left), right)
    if rk in ("Boolean", "Null"):
        return _coerce(left, to_number(right))
    return left, right, lk, rk


def _upper(text):
    # OrdinalIgnoreCase compares the upper-cased code units.
    return text.upper()


def abstract_equal(left, right):
    left, right, lk, rk = _coerce(left, right)
    if lk != rk:
        return False
    if lk == "Null":
        return True
    if lk == "Number":
        if math.isnan(left) or math.isnan(right):
            return False
        return float(left) == float(right)
    if lk == "String":
        return _upper(left) == _upper(right)
    if lk == "Boolean":
        return left == right
    return left is right  # objects and arrays: the same one


def abstract_greater(left, right):
    left, right, lk, rk = _coerce(left, right)
    if lk != rk:
        return False
    if lk == "Number":
        if math.isnan(left) or math.isnan(right):
            return False
        return float(left) > float(right)
    if lk == "String":
        return _upper(left) > _upper(right)
    if lk == "Boolean":
        return left and not right
    return False


def abstract_less(left, right):
    left, right, lk, rk = _coerce(left, right)
    if lk != rk:
        return False
    if lk == "Number":
        if math.isnan(left) or math.isnan(right):
            return False
        return float(left) < float(right)
    if lk == "String":
        return _upper(left) < _upper(right)
    if lk == "Boolean":
        return (not left) and right
    return False


def _lookup(obj, key):
    """A property of an object: GitHub's dictionaries ignore case."""
    if key in obj:
        return True, obj[key]
    folded = _upper(key)
    for k, v in obj.items():
        if _upper(k) == folded:
            return True, v
    return False, None


def _index(left, index, wildcard):
    """Operators/Index.cs."""
    if not isinstance(left, (dict, list)):
        return FilteredArray() if wildcard else None

    def integer_index():
        number = to_number(index)
        if math.isnan(number) or number < 0 or math.floor(number) > 0x7FFFFFFF:
            return None
        return int(math.floor(number))

    def string_index():
        return to_string(index) if is_primitive(index) else None

    if isinstance(left, FilteredArray):
        result = FilteredArray()
        for item in left:
            if isinstance(item, dict):
                if wildcard:
                    result.extend(item.values())
                elif string_index() is not None:
                    found, value = _lookup(item, string_index())
                    if found:
                        result.append(value)
            elif isinstance(item, list):
                if wildcard:
                    result.extend(item)
                elif integer_index() is not None and integer_index() < len(item):
                    result.append(item[integer_index()])
        return result
    if isinstance(left, dict):
        if wildcard:
            return FilteredArray(left.values())
        if string_index() is not None:
            found, value = _lookup(left, string_index())
            if found:
                return value
        return None
    if wildcard:
        return FilteredArray(left)
    i = integer_index()
    if i is not None and i < len(left):
        return left[i]
    return None


def to_json(value, depth=0):
    """Functions/ToJson.cs: two-space indent, numbers as G15."""
    pad = "  " * (depth + 1)
    kind = kind_of(value)
    if kind == "Array":
        if not value:
            return "[]"
        return "[\n" + ",\n".join(pad + to_json(v, depth + 1) for v in value) + "\n" + "  " * depth + "]"
    if kind == "Object":
        if not value:
            return "{}"
        return "{\n" + ",\n".join(
            pad + json.dumps(k, ensure_ascii=False) + ": " + to_json(v, depth + 1)
            for k, v in value.items()) + "\n" + "  " * depth + "}"
    if kind == "Null":
        return "null"
    if kind == "Boolean":
        return "true" if value else "false"
    if kind == "Number":
        return number_to_string(value)
    return json.dumps(value, ensure_ascii=False)


def _from_json(text):
    def numbers(v):
        if isinstance(v, bool) or v is None or isinstance(v, str):
            return v
        if isinstance(v, (int, float)):
            return float(v)
        if isinstance(v, list):
            return [numbers(x) for x in v]
        return {k: numbers(x) for k, x in v.items()}
    try:
        return numbers(json.loads(text))
    except ValueError as e:
        raise ExpressionError("fromJSON: %s: %r" % (e, text[:80]))


def _format(args):
    """Functions/Format.cs: {N} replaced, {{ and }} escaped, anything else
    an error."""
    fmt = to_string(args[0])
    out = []
    i = 0
    while i < len(fmt):
        lbrace = fmt.find("{", i)
        rbrace = fmt.find("}", i)
        if lbrace >= 0 and (rbrace < 0 or rbrace > lbrace):
            if fmt[lbrace + 1:lbrace + 2] == "{":
                out.append(fmt[i:lbrace + 1])
                i = lbrace + 2
                continue
            m = re.match(r"(\d+)\}", fmt[lbrace + 1:])
            if not m or int(m.group(1)) > 255:
                raise ExpressionError("format: the format string is invalid: %r" % fmt)
            n = int(m.group(1))
            if n > len(args) - 2:
                raise ExpressionError("format: argument {%d} is not given: %r" % (n, fmt))
            out.append(fmt[i:lbrace])
            out.append(to_string(args[n + 1]))
            i = lbrace + 1 + len(m.group(0))
        elif rbrace >= 0:
            if fmt[rbrace + 1:rbrace + 2] == "}":
                out.append(fmt[i:rbrace + 1])
                i = rbrace + 2
            else:
                raise ExpressionError("format: the format string is invalid: %r" % fmt)
        else:
            out.append(fmt[i:])
            break
    return "".join(out)


def _join(args):
    items = args[0]
    if isinstance(items, list) and items:
        separator = ","
        if len(args) > 1 and is_primitive(args[1]):
            separator = to_string(args[1])
        return separator.join(to_string(v) for v in items)
    if is_primitive(items):
        return to_string(items)
    return ""


def _contains(args):
    search, item = args
    if is_primitive(search):
        return is_primitive(item) and _upper(to_string(item)) in _upper(to_string(search))
    if isinstance(search, list):
        return any(abstract_equal(item, v) for v in search)
    return False


def _starts_with(args):
    a, b = args
    return is_primitive(a) and is_primitive(b) and _upper(to_string(a)).startswith(_upper(to_string(b)))


def _ends_with(args):
    a, b = args
    return is_primitive(a) and is_primitive(b) and _upper(to_string(a)).endswith(_upper(to_string(b)))


# name: (min args, max args, implementation). Lazy ones (case) take thunks.
FUNCTIONS = {
    "contains": (2, 2, _contains),
    "startswith": (2, 2, _starts_with),
    "endswith": (2, 2, _ends_with),
    "format": (1, 255, _format),
    "join": (1, 2, _join),
    "tojson": (1, 1, lambda args: to_json(args[0])),
    "fromjson": (1, 1, lambda args: _from_json(to_string(args[0]))),
}
STATUS_FUNCTIONS = {"success", "always", "failure", "cancelled"}


class _Lexer:
    def __init__(self, text):
        self.text = text
        self.i = 0
        self.tokens = []
        last = None
        while True:
            token = self._next(last)
            if token is None:
                break
            self.tokens.append(token)
            last = token

    def _next(self, last):
        t = self.text
        while self.i < len(t) and t[self.i].isspace():
            self.i += 1
        if self.i >= len(t):
            return None
        c = t[self.i]
        start = self.i
        if c in "()[],*":
            self.i += 1
            return (c, c)
        if c == "'":
            self.i += 1
            out = []
            while self.i < len(t):
                ch = t[self.i]
                self.i += 1
                if ch == "'":
                    if self.i < len(t) and t[self.i] == "'":
                        self.i += 1
                    else:
                        return ("string", "".join(out))
                out.append(ch)
            raise ExpressionError("unclosed string in %r" % t)
        if c in "!<>=&|":
            two = t[self.i:self.i + 2]
            if two in ("!=", ">=", "<=", "==", "&&", "||"):
                self.i += 2
                return ("op", two)
            if c in "!<>":
                self.i += 1
                return ("op", c)
            raise ExpressionError("unexpected %r in %r" % (c, t))
        if c == "." and (last is None or last[0] in (",", "(", "[", "op", "func(")):
            return self._number(start)
        if c == ".":
            self.i += 1
            return (".", ".")
        if c in "+-" or c.isdigit():
            return self._number(start)
        while self.i < len(t) and not (t[self.i] in _BOUNDARY or t[self.i].isspace()):
            self.i += 1
        word = t[start:self.i]
        if not _KEYWORD.match(word):
            raise ExpressionError("unexpected %r in %r" % (word, t))
        if last is not None and last[0] == ".":
            return ("property", word)
        if word == "null":
            return ("literal", None)
        if word in ("true", "false"):
            return ("literal", word == "true")
        if word == "NaN":
            return ("literal", float("nan"))
        if word == "Infinity":
            return ("literal", math.inf)
        j = self.i
        while j < len(t) and t[j].isspace():
            j += 1
        if j < len(t) and t[j] == "(":
            return ("function", word)
        return ("name", word)

    def _number(self, start):
        t = self.text
        self.i += 1
        while self.i < len(t) and (not (t[self.i] in _BOUNDARY or t[self.i].isspace()) or t[self.i] == "."):
            self.i += 1
        word = t[start:self.i]
        value = parse_number(word)
        if math.isnan(value):
            raise ExpressionError("unexpected %r in %r" % (word, t))
        return ("literal", value)


class _Parser:
    """Recursive descent with the runner's precedences: || 5, && 6,
    == != 10, < <= > >= 11, ! 16, then . and [ ]."""

    def __init__(self, text, names, functions):
        self.text = text
        self.tokens = _Lexer(text).tokens
        self.pos = 0
        self.names = names
        self.functions = functions

    def parse(self):
        if not self.tokens:
            raise ExpressionError("an empty expression")
        node = self._binary(0)
        if self.pos != len(self.tokens):
            raise ExpressionError("unexpected %r in %r" % (self.tokens[self.pos][1], self.text))
        return node

    _LEVELS = [("||",), ("&&",), ("==", "!="), ("<", "<=", ">", ">=")]

    def _peek(self):
        return self.tokens[self.pos] if self.pos < len(self.tokens) else (None, None)

    def _take(self, kind):
        token = self._peek()
        if token[0] != kind:
            raise ExpressionError("expected %r in %r" % (kind, self.text))
        self.pos += 1
        return token

    def _binary(self, level):
        if level == len(self._LEVELS):
            return self._unary()
        node = self._binary(level + 1)
        while self._peek()[0] == "op" and self._peek()[1] in self._LEVELS[level]:
            op = self._take("op")[1]
            node = ("binary", op, node, self._binary(level + 1))
        return node

    def _unary(self):
        if self._peek() == ("op", "!"):
            self.pos += 1
            return ("not", self._unary())
        return self._postfix(self._primary())

    def _primary(self):
        kind, value = self._peek()
        self.pos += 1
        if kind == "literal" or kind == "string":
            return ("literal", value)
        if kind == "(":
            node = self._binary(0)
            self._take(")")
            return ("group", node)
        if kind == "name":
            if value.lower() not in self.names:
                raise ExpressionError("Unrecognized named-value: '%s' in %r (contexts here: %s)"
                                      % (value, self.text, ", ".join(sorted(self.names))))
            return ("name", value.lower())
        if kind == "function":
            name = value.lower()
            if name not in self.functions:
                raise ExpressionError("Unrecognized function: '%s' in %r" % (value, self.text))
            self._take("(")
            args = []
            if self._peek()[0] != ")":
                args.append(self._binary(0))
                while self._peek()[0] == ",":
                    self.pos += 1
                    args.append(self._binary(0))
            self._take(")")
            low, high = self.functions[name]
            if not low <= len(args) <= high:
                raise ExpressionError("%s() takes %d to %d arguments, %d given in %r"
                                      % (value, low, high, len(args), self.text))
            return ("call", name, args)
        raise ExpressionError("unexpected %r in %r" % (value, self.text))

    def _postfix(self, node):
        if node[0] == "literal" and self._peek()[0] in (".", "["):
            raise ExpressionError("a literal cannot be indexed in %r" % self.text)
        while True:
            kind = self._peek()[0]
            if kind == ".":
                self.pos += 1
                token = self._peek()
                self.pos += 1
                if token[0] == "*":
                    node = ("index", node, None, True)
                elif token[0] == "property":
                    node = ("index", node, ("literal", token[1]), False)
                else:
                    raise ExpressionError("a property name must follow '.' in %r" % self.text)
            elif kind == "[":
                self.pos += 1
                if self._peek()[0] == "*":
                    self.pos += 1
                    node = ("index", node, None, True)
                else:
                    node = ("index", node, self._binary(0), False)
                self._take("]")
            else:
                return node


def _uses_status_function(node):
    if node[0] == "call":
        return node[1] in STATUS_FUNCTIONS or any(_uses_status_function(a) for a in node[2])
    if node[0] in ("binary",):
        return _uses_status_function(node[2]) or _uses_status_function(node[3])
    if node[0] in ("not", "group"):
        return _uses_status_function(node[1])
    if node[0] == "index":
        return _uses_status_function(node[1]) or (node[2] is not None and _uses_status_function(node[2]))
    return False


class Scope:
    """What an expression may see: contexts (named values) and functions
    beyond the built-in ones (hashFiles, the status functions)."""

    def __init__(self, contexts, extra_functions=None):
        self.contexts = {k.lower(): v for k, v in contexts.items()}
        self.extra = dict(extra_functions or {})  # name -> (min, max, fn)

    def function_table(self):
        table = {name: (lo, hi) for name, (lo, hi, _) in FUNCTIONS.items()}
        table["case"] = (3, 255)
        for name, (lo, hi, _) in self.extra.items():
            table[name] = (lo, hi)
        return table

    def parse(self, text):
        return _Parser(text, set(self.contexts), self.function_table()).parse()

    def evaluate_text(self, text):
        return self.evaluate(self.parse(text))

    def evaluate(self, node):
        kind = node[0]
        if kind == "literal":
            return node[1]
        if kind == "group":
            return self.evaluate(node[1])
        if kind == "name":
            return self.contexts[node[1]]
        if kind == "not":
            return not is_truthy(self.evaluate(node[1]))
        if kind == "index":
            left = self.evaluate(node[1])
            index = None if node[3] else self.evaluate(node[2])
            return _index(left, index, node[3])
        if kind == "binary":
            op = node[1]
            if op == "||":
                left = self.evaluate(node[2])
                return left if is_truthy(left) else self.evaluate(node[3])
            if op == "&&":
                left = self.evaluate(node[2])
                return left if not is_truthy(left) else self.evaluate(node[3])
            left, right = self.evaluate(node[2]), self.evaluate(node[3])
            if op == "==":
                return abstract_equal(left, right)
            if op == "!=":
                return not abstract_equal(left, right)
            if op == "<":
                return abstract_less(left, right)
            if op == ">":
                return abstract_greater(left, right)
            if op == "<=":
                return abstract_equal(left, right) or abstract_less(left, right)
            if op == ">=":
                return abstract_equal(left, right) or abstract_greater(left, right)
        if kind == "call":
            name, args = node[1], node[2]
            if name == "case":
                if len(args) % 2 == 0:
                    raise ExpressionError("case requires an odd number of arguments")
                for i in range(0, len(args) - 1, 2):
                    predicate = self.evaluate(args[i])
                    if not isinstance(predicate, bool):
                        raise ExpressionError("case predicate must evaluate to a boolean value")
                    if predicate:
                        return self.evaluate(args[i + 1])
                return self.evaluate(args[-1])
            values = [self.evaluate(a) for a in args]
            if name in self.extra:
                return self.extra[name][2](values)
            return FUNCTIONS[name][2](values)
        raise ExpressionError("cannot evaluate %r" % (node,))


def split_template(raw):
    """A YAML string as the runner's TemplateReader.ParseScalar splits it:
    literal text and `${{ expression }}` segments; an expression ends at
    the first `}}` outside a single-quoted string."""
    segments = []
    i = 0
    start = raw.find("${{")
    if start < 0:
        return [("text", raw)]
    while i < len(raw):
        if i == start:
            end = -1
            in_string = False
            j = i + 3
            while j < len(raw):
                if raw[j] == "'":
                    in_string = not in_string
                elif not in_string and raw[j] == "}" and raw[j - 1] == "}":
                    end = j
                    break
                j += 1
            if end < 0:
                raise ExpressionError("The expression is not closed: %r" % raw)
            segments.append(("expr", raw[start + 3:end - 1]))
            i = end + 1
            start = raw.find("${{", i)
        elif start >= 0 and i < start:
            segments.append(("text", raw[i:start]))
            i = start
        else:
            segments.append(("text", raw[i:]))
            break
    return segments


def evaluate_template(raw, scope):
    """A YAML value with expressions: one expression alone keeps its type;
    text around expressions makes a string (format() semantics)."""
    if not isinstance(raw, str):
        return raw
    segments = split_template(raw)
    if len(segments) == 1 and segments[0][0] == "expr":
        return scope.evaluate_text(segments[0][1])
    return "".join(text if kind == "text" else to_string(scope.evaluate_text(text))
                   for kind, text in segments)


def template_string(raw, scope, what):
    """A value that must be a string (env, with:, run:): null is '',
    numbers and booleans as text, an object or array an error (as the
    runner's "A mapping was not expected")."""
    if raw is None:
        return ""
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, (int, float)):
        return number_to_string(raw)
    if not isinstance(raw, str):
        raise ActionError("%s: a string was expected, not %r" % (what, raw))
    value = evaluate_template(raw, scope)
    if isinstance(value, (dict, list)):
        raise ActionError("%s: the expression gives %s, not a string" % (what, kind_of(value)))
    return to_string(value)


def condition_text(raw):
    """`if:` as the expression to evaluate: `${{ x }}` alone is x, plain
    text is an expression, text mixed with `${{ }}` is a format() string
    (truthy: a known GitHub pitfall); without a status function it is
    `success() && (x)` (PipelineTemplateConverter.ConvertToIfCondition)."""
    if raw is None or (isinstance(raw, str) and raw.strip() == ""):
        return "success()"
    if isinstance(raw, bool):
        raw = "true" if raw else "false"
    if isinstance(raw, (int, float)):
        raw = number_to_string(raw)
    segments = split_template(raw)
    if len(segments) == 1:
        return segments[0][1]
    args = []
    fmt = []
    for kind, text in segments:
        if kind == "text":
            fmt.append(text.replace("'", "''").replace("{", "{{").replace("}", "}}"))
        else:
            fmt.append("{%d}" % len(args))
            args.append(text)
    return "format('%s'%s)" % ("".join(fmt), "".join(", " + a for a in args))


# ---------------------------------------------------------------------------
# hashFiles (src/Misc/expressionFunc/hashFiles with @actions/glob)
# ---------------------------------------------------------------------------

def _glob_regex(pattern):
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i) or pattern[i:] == "**":
            out.append("(?:.*/)?" if pattern.startswith("**/", i) else ".*")
            i += 3 if pattern.startswith("**/", i) else 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            close = pattern.find("]", i + 1)
            if close < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:close]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = close
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("^" + "".join(out) + "$")


def hash_files(workspace, patterns):
    """sha256 over the sha256 digest of each matched file under the
    workspace ('' when none). A pattern matching a directory takes all
    below it (@actions/glob's implicit descendants); `!pattern` excludes;
    the last pattern matching a path decides. Files in the order of a
    depth-first walk with each directory's names sorted bytewise, as
    Node's readdir (libuv scandir) gives them."""
    rules = []
    for pattern in "\n".join(patterns).split("\n"):
        pattern = pattern.strip()
        if not pattern or pattern.startswith("#"):
            continue
        negate = pattern.startswith("!")
        pattern = pattern[1:].strip() if negate else pattern
        if pattern.startswith("./"):
            pattern = pattern[2:]
        if os.path.isabs(pattern):
            pattern = os.path.relpath(pattern, workspace)
        rules.append((negate, _glob_regex(pattern.rstrip("/"))))

    def included(rel):
        verdict = False
        parts = rel.split("/")
        for negate, regex in rules:
            # implicit descendants: a rule matching a parent matches this
            if any(regex.match("/".join(parts[:n])) for n in range(1, len(parts) + 1)):
                verdict = not negate
        return verdict

    result = hashlib.sha256()
    matched = False

    def walk(directory, rel):
        nonlocal matched
        for name in sorted(os.listdir(directory), key=os.fsencode):
            path = os.path.join(directory, name)
            sub = rel + "/" + name if rel else name
            if os.path.isdir(path) and not os.path.islink(path):
                walk(path, sub)
            elif os.path.isfile(path) and included(sub):
                with open(path, "rb") as f:
                    result.update(hashlib.sha256(f.read()).digest())
                matched = True

    walk(workspace, "")
    return result.hexdigest() if matched else ""


# ---------------------------------------------------------------------------
# The Actions cache on a folder (actions/cache, actions/cache/restore, save)
# ---------------------------------------------------------------------------

class CacheFolder:
    """Entries saved under a key, newest last, each with the ref that saved
    it (GitHub scopes caches by branch: a run reads its own ref's, then its
    base branch's, then the default branch's) and a version (the paths:
    a restore with other paths does not match)."""

    def __init__(self, folder):
        self.folder = folder
        os.makedirs(os.path.join(folder, "entries"), exist_ok=True)

    def _entries(self):
        entries = []
        base = os.path.join(self.folder, "entries")
        for name in os.listdir(base):
            meta = os.path.join(base, name, "meta.json")
            if os.path.exists(meta):
                with open(meta) as f:
                    entry = json.load(f)
                entry["dir"] = os.path.join(base, name)
                entries.append(entry)
        entries.sort(key=lambda e: e["sequence"])
        return entries

    def keys(self):
        return [e["key"] for e in self._entries()]

    @staticmethod
    def version(paths):
        return hashlib.sha256("|".join(paths).encode()).hexdigest()

    @staticmethod
    def validate(keys):
        if len(keys) > 10:
            raise ActionError("Key Validation Error: Keys are limited to a maximum of 10.")
        for key in keys:
            if len(key) > 512:
                raise ActionError("Key Validation Error: %s cannot be larger than 512 characters." % key)
            if "," in key:
                raise ActionError("Key Validation Error: %s cannot contain commas." % key)

    def find(self, key, restore_keys, paths, scopes):
        """The matched entry: the exact key, else the newest whose key
        starts with the key, else for each restore key in order the newest
        starting with it; in each, the run's own scope first."""
        version = self.version(paths)
        entries = [e for e in self._entries() if e["version"] == version]
        for candidate, exact in [(key, True), (key, False)] + [(k, False) for k in restore_keys]:
            for scope in scopes:
                for entry in reversed(entries):  # newest first
                    if entry["scope"] != scope:
                        continue
                    if (entry["key"] == candidate) if exact else entry["key"].startswith(candidate):
                        return entry
        return None

    def restore(self, entry, resolved_paths):
        with tarfile.open(os.path.join(entry["dir"], "data.tar")) as tar:
            for i, target in enumerate(resolved_paths):
                members = [m for m in tar.getmembers() if m.name == "p%d" % i or m.name.startswith("p%d/" % i)]
                if not members:
                    continue
                with tempfile.TemporaryDirectory(dir=self.folder) as tmp:
                    tar.extractall(tmp, members=members)
                    source = os.path.join(tmp, "p%d" % i)
                    if os.path.isdir(target) and not os.path.islink(target):
                        shutil.rmtree(target)
                    elif os.path.lexists(target):
                        os.unlink(target)
                    os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
                    shutil.move(source, target)

    def save(self, key, paths, resolved_paths, scope):
        """Returns a warning (str) when nothing is saved, as actions/cache
        warns (never fails) on save."""
        if any(e["key"] == key and e["scope"] == scope for e in self._entries()):
            return ("Failed to save: Unable to reserve cache with key %s, another job may be "
                    "creating this cache." % key)
        existing = [p for p in resolved_paths if os.path.lexists(p)]
        if not existing:
            return ("Path Validation Error: Path(s) specified in the action for caching do(es) "
                    "not exist, hence no cache is being saved.")
        sequence_file = os.path.join(self.folder, "sequence")
        sequence = 1
        if os.path.exists(sequence_file):
            with open(sequence_file) as f:
                sequence = int(f.read()) + 1
        with open(sequence_file, "w") as f:
            f.write(str(sequence))
        entry_dir = os.path.join(self.folder, "entries", "%06d" % sequence)
        os.makedirs(entry_dir)
        with tarfile.open(os.path.join(entry_dir, "data.tar"), "w") as tar:
            for i, path in enumerate(resolved_paths):
                if os.path.lexists(path):
                    tar.add(path, arcname="p%d" % i)
        with open(os.path.join(entry_dir, "meta.json"), "w") as f:
            json.dump({"key": key, "version": self.version(paths), "scope": scope,
                       "sequence": sequence, "paths": paths}, f)
        return None


# ---------------------------------------------------------------------------
# Running a composite action
# ---------------------------------------------------------------------------

class StepResult:
    def __init__(self, name, step_id):
        self.name = name
        self.id = step_id
        self.outputs = {}
        self.outcome = "skipped"
        self.conclusion = "skipped"
        self.failures = []        # why the step failed
        self.annotations = []     # (error|warning|notice, text)
        self.summary = None       # the step summary GitHub would show
        self.log = ""

    def fail(self, why):
        self.failures.append(why)

    def as_json(self):
        return {"name": self.name, "id": self.id, "outcome": self.outcome,
                "conclusion": self.conclusion, "outputs": self.outputs,
                "failures": self.failures, "annotations": self.annotations,
                "summary": self.summary}


class ActionResult:
    def __init__(self):
        self.outputs = {}
        self.steps = []
        self.success = True
        self.failed_step = None

    def summaries(self):
        return [s.summary for s in self.steps if s.summary]

    def as_json(self):
        return {"success": self.success, "failed_step": self.failed_step,
                "outputs": self.outputs, "steps": [s.as_json() for s in self.steps]}


def _default_runner_context(context):
    runner = dict(context.get("runner") or {})
    runner.setdefault("os", "Linux")
    runner.setdefault("arch", "X64")
    runner.setdefault("name", "stand-in")
    runner.setdefault("environment", "github-hosted")
    if not runner.get("temp"):
        runner["temp"] = tempfile.mkdtemp(prefix="runner-temp-")
    if not runner.get("tool_cache"):
        runner["tool_cache"] = os.path.join(runner["temp"], "_tool")
    for key in ("temp", "tool_cache"):
        os.makedirs(runner[key], exist_ok=True)
    return runner


class ActionRunner:
    """Runs composite actions for one job: the global env, PATH additions
    and the cache persist across the actions it runs, as in a job."""

    def __init__(self, context, workspace=None, log=None):
        self.context = copy.deepcopy(context)
        github = self.context.setdefault("github", {})
        if workspace:
            github["workspace"] = os.path.abspath(workspace)
        if not github.get("workspace"):
            raise ActionError("no workspace (--workspace, or github.workspace in the context)")
        self.workspace = github["workspace"]
        self.runner = _default_runner_context(self.context)
        self.windows = self.runner["os"] == "Windows"
        github.setdefault("event", {})
        github.setdefault("event_name", "push")
        github.setdefault("server_url", "https://github.com")
        github.setdefault("run_attempt", "1")
        github.setdefault("run_id", "1")
        github.setdefault("actor", "stand-in")
        github.setdefault("job", "job")
        for name in ("sha", "ref", "ref_name", "base_ref", "head_ref", "repository",
                     "repository_owner", "action_repository", "run_number"):
            github.setdefault(name, "")
        # GitHub's numbers are strings in github.* (run_number is '12').
        for name in ("run_number", "run_attempt", "run_id"):
            if not isinstance(github[name], str):
                github[name] = to_string(float(github[name]))
        self.github = github
        event_dir = os.path.join(self.runner["temp"], "_github_workflow")
        os.makedirs(event_dir, exist_ok=True)
        self.event_path = os.path.join(event_dir, "event.json")
        with open(self.event_path, "w") as f:
            json.dump(github["event"], f)
        self.github["event_path"] = self.event_path
        self.env = dict(self.context.get("env") or {})   # the job's env + $GITHUB_ENV
        self.env_overrides = []                          # env: of enclosing uses: steps
        self.prepend_path = []                           # $GITHUB_PATH, oldest first
        self.actions = dict(self.context.get("actions") or {})
        cache_dir = self.context.get("cache_dir")
        self.cache = CacheFolder(cache_dir) if cache_dir else None
        self.command_dir = os.path.join(self.runner["temp"], "_runner_file_commands")
        os.makedirs(self.command_dir, exist_ok=True)
        self.log = log if log is not None else sys.stderr
        self.post_steps = []

    # -- the process environment of a step ---------------------------------

    def _base_environ(self):
        # The machine's environment without any GitHub or runner variables
        # of an outer CI: a test is then the same inside GitHub Actions.
        return {k: v for k, v in os.environ.items()
                if not (k.startswith("GITHUB_") or k.startswith("RUNNER_") or k.startswith("INPUT_")
                        or k in ("CI", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_CACHE_URL"))}

    def _env_context(self, step_env=None):
        """The env context and the variables a step gets: the job's env
        with $GITHUB_ENV, then enclosing uses: steps' env, then its own."""
        env = dict(self.env)
        for overrides in self.env_overrides:
            env.update(overrides)
        env.update(step_env or {})
        return env

    def _github_environ(self, action_path):
        g = self.github
        return {
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_WORKSPACE": self.workspace,
            "GITHUB_EVENT_PATH": self.event_path,
            "GITHUB_EVENT_NAME": str(g["event_name"]),
            "GITHUB_SHA": str(g["sha"]),
            "GITHUB_REF": str(g["ref"]),
            "GITHUB_REF_NAME": str(g["ref_name"]),
            "GITHUB_BASE_REF": str(g["base_ref"]),
            "GITHUB_HEAD_REF": str(g["head_ref"]),
            "GITHUB_RUN_NUMBER": str(g["run_number"]),
            "GITHUB_RUN_ATTEMPT": str(g["run_attempt"]),
            "GITHUB_RUN_ID": str(g["run_id"]),
            "GITHUB_REPOSITORY": str(g["repository"]),
            "GITHUB_REPOSITORY_OWNER": str(g["repository_owner"]),
            "GITHUB_ACTION_REPOSITORY": str(g["action_repository"]),
            "GITHUB_SERVER_URL": str(g["server_url"]),
            "GITHUB_ACTOR": str(g["actor"]),
            "GITHUB_JOB": str(g["job"]),
            "GITHUB_ACTION_PATH": action_path,
            "RUNNER_OS": self.runner["os"],
            "RUNNER_ARCH": self.runner["arch"],
            "RUNNER_NAME": self.runner["name"],
            "RUNNER_TEMP": self.runner["temp"],
            "RUNNER_TOOL_CACHE": self.runner["tool_cache"],
            "RUNNER_ENVIRONMENT": self.runner["environment"],
        }

    # -- scopes --------------------------------------------------------------

    def _github_context(self, action_path):
        github = dict(self.github)
        github["action_path"] = action_path
        github["workspace"] = self.workspace
        return github

    def _functions(self, status=None):
        functions = {"hashfiles": (1, 255, lambda args: hash_files(self.workspace, [to_string(a) for a in args]))}
        if status is not None:
            functions["success"] = (0, 0, lambda args: not status["failed"])
            functions["failure"] = (0, 0, lambda args: status["failed"])
            functions["always"] = (0, 0, lambda args: True)
            functions["cancelled"] = (0, 0, lambda args: False)
        return functions

    # -- the action ------------------------------------------------------------

    def run(self, action_yml, inputs=None, _nested=False):
        """Runs the composite action at action_yml with the given inputs
        (name -> string). Returns an ActionResult; raises ActionError when
        the action cannot be run at all."""
        action_yml = os.path.abspath(action_yml)
        with open(action_yml) as f:
            try:
                action = yaml.safe_load(f)
            except yaml.YAMLError as e:
                raise ActionError("%s: not YAML: %s" % (action_yml, e))
        if not isinstance(action, dict) or not isinstance(action.get("runs"), dict):
            raise ActionError("%s: no runs: section" % action_yml)
        runs = action["runs"]
        if runs.get("using") != "composite":
            raise ActionError("%s: runs.using is %r; only composite actions are emulated"
                              % (action_yml, runs.get("using")))
        action_path = os.path.dirname(action_yml)
        result = ActionResult()
        steps_context = {}
        status = {"failed": False}

        input_values = self._inputs(action, action_yml, action_path, inputs or {})
        for index, step in enumerate(runs.get("steps") or []):
            self._run_step(step, index, action_path, input_values, steps_context, status, result)

        output_scope = Scope({"github": self._github_context(action_path), "inputs": input_values,
                              "steps": steps_context, "runner": self.runner, "env": self._env_context()},
                             self._functions())
        for name, spec in (action.get("outputs") or {}).items():
            value = (spec or {}).get("value") if isinstance(spec, dict) else None
            result.outputs[name] = template_string(value, output_scope, "outputs.%s.value" % name)
        result.success = not status["failed"]
        if not _nested:
            self._run_post_steps(result, status)
            result.success = not status["failed"]
        return result

    def _inputs(self, action, action_yml, action_path, given):
        declared = action.get("inputs") or {}
        lowered = {k.lower(): v for k, v in given.items()}
        unexpected = sorted(set(lowered) - {k.lower() for k in declared})
        if unexpected:
            self._say("warning: Unexpected input(s) %s, valid inputs are %s"
                      % (unexpected, sorted(declared)))
        scope = Scope({"github": self._github_context(action_path), "runner": self.runner,
                       "env": self._env_context()}, self._functions())
        values = {}
        for name, spec in declared.items():
            spec = spec or {}
            if name.lower() in lowered:
                values[name] = lowered[name.lower()]
            elif "default" in spec:
                values[name] = template_string(spec["default"], scope, "inputs.%s.default" % name)
            elif spec.get("required") in (True, "true"):
                # GitHub only warns; a stand-in that refuses catches a
                # workflow forgetting the input.
                raise ActionError("%s: required input '%s' not given" % (action_yml, name))
            else:
                values[name] = ""
        return values

    def _say(self, text):
        print("[runner] " + text, file=self.log, flush=True)

    def _run_step(self, step, index, action_path, inputs, steps_context, status, result):
        step_id = step.get("id")
        name = step.get("name") or step_id or step.get("uses") or ("run %d" % (index + 1))
        record = StepResult(name, step_id)
        result.steps.append(record)
        if step_id:
            steps_context[step_id] = {"outputs": record.outputs, "outcome": "skipped", "conclusion": "skipped"}

        def scope_with(env):
            return Scope({"github": self._github_context(action_path), "inputs": inputs,
                          "steps": steps_context, "runner": self.runner, "env": env},
                         self._functions())

        scope = scope_with(self._env_context())
        condition_scope = Scope(scope.contexts, self._functions(status))
        condition = condition_text(step.get("if"))
        try:
            tree = condition_scope.parse(condition)
            if not _uses_status_function(tree):
                tree = condition_scope.parse("success() && (%s)" % condition)
            run_it = is_truthy(condition_scope.evaluate(tree))
        except ActionError as e:
            record.fail("if: %s" % e)
            run_it = None
        if run_it is False:
            self._say("step '%s' skipped (if: %s)" % (name, condition))
            return

        continue_on_error = False
        if run_it:
            try:
                continue_on_error = is_truthy(evaluate_template(step.get("continue-on-error", False), scope))
                step_env = {k: template_string(v, scope, "env.%s" % k)
                            for k, v in (step.get("env") or {}).items()}
                # The step's own env: is in its env context for run:, with:.
                scope = scope_with(self._env_context(step_env))
                if "run" in step:
                    self._run_shell(step, record, scope, step_env, action_path)
                elif "uses" in step:
                    self._run_uses(step, record, scope, step_env, action_path)
                else:
                    raise ActionError("step '%s' has neither run: nor uses:" % name)
            except ActionError as e:
                record.fail(str(e))

        record.outcome = "failure" if record.failures else "success"
        record.conclusion = "success" if (record.failures and continue_on_error) else record.outcome
        if step_id:
            steps_context[step_id]["outcome"] = record.outcome
            steps_context[step_id]["conclusion"] = record.conclusion
        for why in record.failures:
            self._say("step '%s' failed: %s%s" % (name, why, " (continue-on-error)" if continue_on_error else ""))
        if record.conclusion == "failure":
            status["failed"] = True
            if result.failed_step is None:
                result.failed_step = name

    # -- run: -------------------------------------------------------------

    def _step_files(self):
        suffix = str(uuid.uuid4())
        files = {}
        for variable, prefix in (("GITHUB_OUTPUT", "set_output_"), ("GITHUB_ENV", "set_env_"),
                                 ("GITHUB_PATH", "add_path_"), ("GITHUB_STATE", "save_state_"),
                                 ("GITHUB_STEP_SUMMARY", "step_summary_")):
            path = os.path.join(self.command_dir, prefix + suffix)
            open(path, "wb").close()
            files[variable] = path
        return files

    def _process_environ(self, action_path, step_env, files):
        environ = self._base_environ()
        environ.update(self._github_environ(action_path))
        environ.update(self._env_context(step_env))
        environ.update(files)
        if self.prepend_path:
            environ["PATH"] = os.pathsep.join(list(reversed(self.prepend_path)) + [environ.get("PATH", "")])
        return environ

    def _run_shell(self, step, record, scope, step_env, action_path):
        shell = step.get("shell")
        if not shell:
            raise ActionError("a run: step of a composite action needs shell:")
        script = template_string(step["run"], scope, "run")
        if shell == "bash":
            command = ["bash", "--noprofile", "--norc", "-eo", "pipefail"]
        elif shell == "sh":
            command = ["sh", "-e"]
        else:
            raise ActionError("shell %r is not emulated (bash, sh)" % shell)
        directory = step.get("working-directory")
        cwd = self.workspace
        if directory:
            cwd = os.path.join(self.workspace, template_string(directory, scope, "working-directory"))
        if not os.path.isdir(cwd):
            raise ActionError("working-directory %s does not exist" % cwd)
        script_path = os.path.join(self.runner["temp"], "%s.sh" % uuid.uuid4())
        with open(script_path, "w") as f:
            f.write(script)
        files = self._step_files()
        environ = self._process_environ(action_path, step_env, files)
        commands = WorkflowCommands(record)
        self._say("run %s: %s" % (record.name, " ".join(command + [script_path])))
        # One stream (stderr into stdout) keeps the order the step wrote
        # its lines in; the runner reads both for workflow commands.
        log = []
        with subprocess.Popen(command + [script_path], cwd=cwd, env=environ,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT) as process:
            for raw in process.stdout:
                text = raw.decode("utf-8", errors="replace").rstrip("\n")
                log.append(text)
                self.log.write("    " + text + "\n")
                commands.line(text)
            self.log.flush()
            code = process.wait()
        record.log = "\n".join(log)
        if code != 0:
            record.fail("Process completed with exit code %d." % code)
        self._process_files(files, record)

    def _process_files(self, files, record):
        """After the step, as FileCommandManager.ProcessFiles: each file on
        its own; an error in one fails the step and keeps what was read
        before it."""
        def read(variable):
            with open(files[variable], "rb") as f:
                return f.read()

        try:
            for line in read_path_lines(decode_file(read("GITHUB_PATH"))):
                if line in self.prepend_path:
                    self.prepend_path.remove(line)
                self.prepend_path.append(line)
        except OSError as e:
            record.fail("Unable to process file command 'path' successfully: %s" % e)
        try:
            for name, value in read_file_command(decode_file(read("GITHUB_ENV")), self.windows):
                if name.upper() == "NODE_OPTIONS":
                    record.annotations.append(("error", "Can't store NODE_OPTIONS output parameter using '$GITHUB_ENV' command."))
                    continue
                self.env[name] = value
        except FileCommandError as e:
            record.fail("Unable to process file command 'env' successfully: %s" % e)
        summary = read("GITHUB_STEP_SUMMARY")
        if len(summary) > STEP_SUMMARY_LIMIT:
            record.annotations.append(("error", "$GITHUB_STEP_SUMMARY upload aborted, supports content up to a size of %dk, got %dk."
                                       % (STEP_SUMMARY_LIMIT // 1024, len(summary) // 1024)))
        elif summary:
            record.summary = summary.decode("utf-8", errors="replace")
        try:
            for _ in read_file_command(decode_file(read("GITHUB_STATE")), self.windows):
                pass
        except FileCommandError as e:
            record.fail("Unable to process file command 'state' successfully: %s" % e)
        try:
            for name, value in read_file_command(decode_file(read("GITHUB_OUTPUT")), self.windows):
                record.outputs[name] = value
        except FileCommandError as e:
            record.fail("Unable to process file command 'output' successfully: %s" % e)

    # -- uses: --------------------------------------------------------------

    def _run_uses(self, step, record, scope, step_env, action_path):
        uses = template_string(step["uses"], scope, "uses")
        with_values = {k: template_string(v, scope, "with.%s" % k) for k, v in (step.get("with") or {}).items()}
        cache_action = re.match(r"^actions/cache(/restore|/save)?@v4$", uses)
        if cache_action:
            self._cache_step(cache_action.group(1) or "", with_values, record)
            return
        if uses.startswith("./"):
            directory = os.path.join(self.workspace, uses[2:])
        elif uses in self.actions:
            directory = self.actions[uses]
        elif uses.split("@")[0] in self.actions:
            directory = self.actions[uses.split("@")[0]]
        else:
            raise ActionError("uses: %s is not emulated (actions/cache@v4 and its restore/save, "
                              "./path, or an entry of the context's actions table)" % uses)
        action_yml = None
        for name in ("action.yml", "action.yaml"):
            if os.path.exists(os.path.join(directory, name)):
                action_yml = os.path.join(directory, name)
        if action_yml is None:
            raise ActionError("uses: %s: no action.yml in %s" % (uses, directory))
        # The uses: step's env: reaches every step of that action and wins
        # over the job's env, but ends with the step; what $GITHUB_ENV
        # sets in there stays for the job (self.env).
        self.env_overrides.append(step_env)
        try:
            nested = self.run(action_yml, with_values, _nested=True)
        finally:
            self.env_overrides.pop()
        record.outputs.update(nested.outputs)
        for inner in nested.steps:
            record.annotations.extend(inner.annotations)
        record.summary = "".join(nested.summaries()) or None
        if not nested.success:
            record.fail("the action %s failed at step '%s'" % (uses, nested.failed_step))

    def _cache_scopes(self):
        scopes = [self.github["ref"]]
        if self.github.get("base_ref"):
            scopes.append("refs/heads/" + self.github["base_ref"])
        repository = (self.github.get("event") or {}).get("repository") or {}
        scopes.append("refs/heads/" + (repository.get("default_branch") or "main"))
        return list(dict.fromkeys(scopes))

    def _resolve_paths(self, with_values):
        paths = [p.strip() for p in with_values.get("path", "").split("\n") if p.strip()]
        if not paths:
            raise ActionError("Input required and not supplied: path")
        for p in paths:
            if any(c in p for c in "*?[") or p.startswith("!"):
                raise ActionError("cache path %r: globs are not emulated" % p)
        resolved = [os.path.join(self.workspace, os.path.expanduser(p)) for p in paths]
        return paths, resolved

    def _cache_step(self, kind, with_values, record):
        if self.cache is None:
            raise ActionError("actions/cache: the context has no cache_dir")
        key = with_values.get("key", "")
        if not key:
            raise ActionError("Input required and not supplied: key")
        paths, resolved = self._resolve_paths(with_values)
        if kind in ("", "/restore"):
            restore_keys = [k.strip() for k in with_values.get("restore-keys", "").split("\n") if k.strip()]
            CacheFolder.validate([key] + restore_keys)
            entry = self.cache.find(key, restore_keys, paths, self._cache_scopes())
            if kind == "/restore":
                record.outputs["cache-primary-key"] = key
            if entry is None:
                # cache-hit is left unset on a miss (actions/cache#1466).
                self._say("Cache not found for input keys: %s" % ", ".join([key] + restore_keys))
                if with_values.get("fail-on-cache-miss") == "true":
                    raise ActionError("Failed to restore cache entry. Exiting as fail-on-cache-miss is set. Input key: %s" % key)
            else:
                self.cache.restore(entry, resolved)
                exact = entry["key"].lower() == key.lower()   # localeCompare, accent-sensitive only
                record.outputs["cache-hit"] = "true" if exact else "false"
                if kind == "/restore":
                    record.outputs["cache-matched-key"] = entry["key"]
                self._say("Cache restored from key: %s" % entry["key"])
            if kind == "":
                # actions/cache@v4 saves in its post step, if the job
                # succeeded and the key was not an exact hit.
                hit = entry is not None and entry["key"].lower() == key.lower()
                if not hit:
                    self.post_steps.append((record.name, key, paths, resolved))
            return
        # actions/cache/save warns on any error, an invalid key included.
        try:
            CacheFolder.validate([key])
            warning = self.cache.save(key, paths, resolved, self.github["ref"])
        except ActionError as e:
            warning = str(e)
        if warning:
            record.annotations.append(("warning", warning))
            self._say("warning: " + warning)
        else:
            self._say("Cache saved with key: %s" % key)

    def _run_post_steps(self, result, status):
        for name, key, paths, resolved in reversed(self.post_steps):
            record = StepResult("Post " + name, None)
            result.steps.append(record)
            if status["failed"]:
                continue  # post-if: success()
            record.outcome = record.conclusion = "success"
            warning = self.cache.save(key, paths, resolved, self.github["ref"])
            if warning:
                record.annotations.append(("warning", warning))
                self._say("warning: " + warning)
        self.post_steps = []


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------

def main(argv):
    parser = argparse.ArgumentParser(description="Run a composite GitHub action as GitHub's runner does.")
    parser.add_argument("--action", required=True, help="the action.yml")
    parser.add_argument("--workspace", required=True, help="the job's workspace (the checkout)")
    parser.add_argument("--context", required=True, help="JSON: github, runner, env, cache_dir, actions")
    parser.add_argument("--with", dest="inputs", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--outputs", help="write the result (outputs, steps) as JSON here")
    parser.add_argument("--summary", help="write the steps' summaries (what GitHub shows) here")
    args = parser.parse_args(argv)
    with open(args.context) as f:
        context = json.load(f)
    inputs = {}
    for item in args.inputs:
        if "=" not in item:
            parser.error("--with %r: NAME=VALUE" % item)
        name, value = item.split("=", 1)
        inputs[name] = value
    try:
        runner = ActionRunner(context, workspace=args.workspace)
        result = runner.run(args.action, inputs)
    except ActionError as e:
        print("actions_runner: %s" % e, file=sys.stderr)
        return 2
    if args.outputs:
        with open(args.outputs, "w") as f:
            json.dump(result.as_json(), f, indent=1)
    if args.summary:
        with open(args.summary, "w") as f:
            f.write("".join(result.summaries()))
    if not result.success:
        print("actions_runner: the action failed at step '%s'" % result.failed_step, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
