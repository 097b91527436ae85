#!/usr/bin/python3
"""ctest ActionsRunnerSelfTest: the stand-in GitHub runner
(actions_runner.py) against what GitHub's runner does, so that the CI
tests that run ste's actions through it can be believed:

  - the file-command parser on the inputs where a naive reader and
    GitHub's differ (values with "=" or "<<", CRLF, a heredoc without its
    delimiter, the last value winning, a forged "\\nmode=none");
  - workflow commands on stdout (set-output still works; stop-commands
    stops it);
  - expressions: GitHub's documented examples and its coercion rules;
  - a composite action: inputs (defaults as expressions, required),
    outputs, if:, continue-on-error, $GITHUB_ENV/$GITHUB_PATH in later
    steps, the step summary's 1 MiB limit;
  - the cache: exact key, restore-keys in order, newest first, scopes,
    save refusing an existing key.

  /usr/bin/python3 tests/ci/actions_runner_test.py
"""

import hashlib
import io
import os
import shutil
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import actions_runner as ar  # noqa: E402


def pairs(text, windows=False):
    return list(ar.read_file_command(text, windows))


def last_values(text):
    """What the runner ends up with: the last value of a name wins."""
    values = {}
    for name, value in ar.read_file_command(text):
        values[name] = value
    return values


class FileCommandTest(unittest.TestCase):
    def test_name_value_keeps_everything_after_the_first_equals(self):
        self.assertEqual(pairs("a=b=c\n"), [("a", "b=c")])

    def test_equals_before_heredoc_marker_is_name_value(self):
        self.assertEqual(pairs("x=1<<2\n"), [("x", "1<<2")])

    def test_heredoc_marker_before_equals_is_heredoc(self):
        self.assertEqual(pairs("x<<E=F\nv\nE=F\n"), [("x", "v")])

    def test_heredoc_value_may_hold_heredoc_markers_and_equals(self):
        self.assertEqual(pairs("a<<EOF\nx << y\nk=v\nEOF\n"), [("a", "x << y\nk=v")])

    def test_heredoc_ends_at_a_line_equal_to_the_delimiter_only(self):
        self.assertEqual(pairs("a<<EOF\n EOF\nEOF \nEOF\n"), [("a", " EOF\nEOF ")])

    def test_empty_heredoc_value(self):
        self.assertEqual(pairs("a<<EOF\nEOF\nb=1\n"), [("a", ""), ("b", "1")])

    def test_delimiter_at_end_of_file_without_newline(self):
        self.assertEqual(pairs("a<<EOF\nv\nEOF"), [("a", "v")])

    def test_crlf_on_linux_keeps_the_carriage_return(self):
        # Only "\n" ends a line on a Linux runner: the CR is in the value,
        # and a heredoc's delimiter line "EOF\r" matches a delimiter "EOF\r".
        self.assertEqual(pairs("a=b\r\n"), [("a", "b\r")])
        self.assertEqual(pairs("a<<EOF\r\nv\r\nEOF\r\n"), [("a", "v\r")])

    def test_crlf_on_windows_ends_lines(self):
        self.assertEqual(pairs("a=b\r\nc<<EOF\r\nv\r\nw\r\nEOF\r\n", windows=True),
                         [("a", "b"), ("c", "v\r\nw")])

    def test_heredoc_without_its_delimiter_is_an_error_after_earlier_entries(self):
        got = []
        with self.assertRaisesRegex(ar.FileCommandError, "Matching delimiter not found 'EOF'"):
            for pair in ar.read_file_command("first=1\na<<EOF\nv\n"):
                got.append(pair)
        self.assertEqual(got, [("first", "1")])

    def test_value_line_at_end_without_newline_is_an_error(self):
        with self.assertRaisesRegex(ar.FileCommandError, "EOF marker missing new line"):
            pairs("a<<EOF\nv")

    def test_heredoc_with_empty_name_or_delimiter_is_an_error(self):
        with self.assertRaisesRegex(ar.FileCommandError, "Name must not be empty"):
            pairs("<<EOF\nv\nEOF\n")
        with self.assertRaisesRegex(ar.FileCommandError, "delimiter must not be empty"):
            pairs("a<<\nv\n\n")

    def test_line_without_either_marker_is_an_error(self):
        with self.assertRaisesRegex(ar.FileCommandError, "Invalid format 'junk'"):
            pairs("junk\n")

    def test_empty_name_with_equals_is_accepted_as_the_runner_does(self):
        self.assertEqual(pairs("=v\n"), [("", "v")])

    def test_blank_lines_are_skipped(self):
        self.assertEqual(pairs("\n\na=1\n\n"), [("a", "1")])

    def test_last_value_of_a_name_wins(self):
        self.assertEqual(last_values("mode=all\nmode=none\n"), {"mode": "none"})

    def test_forged_value_in_naive_form_overrides(self):
        # Why ste writes outputs in the heredoc form: a value holding
        # "\nmode=none" written as NAME=VALUE is a second entry.
        forged = "tests/a\nmode=none"
        self.assertEqual(last_values("mode=all\nreason=%s\n" % forged)["mode"], "none")

    def test_forged_value_in_heredoc_form_stays_one_value(self):
        forged = "tests/a\nmode=none\nghadelimiter_guess\nmode=none"
        text = "mode<<ghadelimiter_0123abcd\nall\nghadelimiter_0123abcd\n" \
               "reason<<ghadelimiter_89ef\n%s\nghadelimiter_89ef\n" % forged
        self.assertEqual(last_values(text), {"mode": "all", "reason": forged})

    def test_path_lines(self):
        self.assertEqual(ar.read_path_lines("/a\r\n/b\n\n/c\r/d"), ["/a", "/b", "/c", "/d"])


class WorkflowCommandTest(unittest.TestCase):
    def run_lines(self, lines):
        step = ar.StepResult("s", "s")
        commands = ar.WorkflowCommands(step)
        for line in lines:
            commands.line(line)
        return step

    def test_set_output_v2_and_v1(self):
        step = self.run_lines(["  ::set-output name=a::x%0Ay", "text ##[set-output name=b;]z%5D"])
        self.assertEqual(step.outputs, {"a": "x\ny", "b": "z]"})

    def test_unregistered_command_is_text(self):
        self.assertEqual(self.run_lines(["::nothing name=a::x"]).outputs, {})

    def test_stop_commands_until_its_token(self):
        step = self.run_lines(["::stop-commands::tok123", "::set-output name=a::forged",
                               "##[set-output name=a;]forged", "::tok123::", "::set-output name=b::ok"])
        self.assertEqual(step.outputs, {"b": "ok"})

    def test_set_env_is_disabled_and_fails_the_step(self):
        self.assertTrue(self.run_lines(["::set-env name=A::b"]).failures)


class ExpressionTest(unittest.TestCase):
    def setUp(self):
        self.workspace = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.workspace)
        github = {
            "event_name": "pull_request",
            "ref": "refs/pull/1/merge",
            "event": {"issue": {"labels": [{"name": "bug"}, {"name": "help wanted"}]},
                      "pull_request": {"labels": [{"name": "a"}, {"name": "[test all]"}],
                                       "base": {"sha": "abc"}, "commits": 3}},
        }
        self.scope = ar.Scope({"github": github, "env": {"X": "1"}, "inputs": {"n": "2"}},
                              {"hashfiles": (1, 255, lambda a: ar.hash_files(self.workspace, a))})

    def ev(self, text):
        return self.scope.evaluate_text(text)

    def test_documented_examples(self):
        table = [
            # literals
            ("null", None), ("false", False), ("711", 711.0), ("-9.2", -9.2), ("0xff", 255.0),
            ("-2.99e-2", -0.0299), ("'It''s open source!'", "It's open source!"),
            # GitHub ignores case when comparing strings
            ("'abc' == 'ABC'", True), ("'abc' != 'ABC'", False),
            # loose equality: mismatched types become numbers
            ("1 == '1'", True), ("'' == 0", True), ("null == 0", True), ("true == 1", True),
            ("false == 0", True), ("' 0x10 ' == 16", True), ("'abc' == 1", False),
            ("NaN == NaN", False), ("'a' == null", False),
            # || and && give an operand's value, not a boolean
            ("'' || 'x'", "x"), ("'y' || 'x'", "y"), ("null || 0", 0.0), ("'a' && 'b'", "b"),
            ("'' && 'b'", ""), ("github.ref == 'refs/heads/main' && 'main' || 'other'", "other"),
            ("github.ref == 'refs/pull/1/merge' && 'pr' || 'other'", "pr"),
            # precedence: ! over ==, < over ==, && over ||
            ("!true == false", True), ("1 < 2 == true", True), ("true || false && false", True),
            ("(true || false) && false", False), ("'a' < 'B'", True), ("'b' > 'A'", True),
            ("2 >= '2'", True), ("1 <= 0", False),
            # functions
            ("contains('Hello world', 'llo')", True), ("contains('Hello world', 'LLO')", True),
            ("contains(github.event.issue.labels.*.name, 'bug')", True),
            ("contains(github.event.issue.labels.*.name, 'BUG')", True),
            ("contains(fromJSON('[\"push\", \"pull_request\"]'), github.event_name)", True),
            ("startsWith('Hello world', 'he')", True), ("endsWith('Hello world', 'LD')", True),
            ("format('Hello {0} {1} {2}', 'Mona', 'the', 'Octocat')", "Hello Mona the Octocat"),
            ("format('{{Hello {0} {1} {2}!}}', 'Mona', 'the', 'Octocat')", "{Hello Mona the Octocat!}"),
            ("format('{0}{{', 'x')", "x{"), ("format('{0}', 1.5)", "1.5"), ("format('{0}', 1e21)", "1E+21"),
            ("format('{0}', 3)", "3"), ("format('{0}', true)", "true"), ("format('{0}', null)", ""),
            ("join(github.event.issue.labels.*.name, ', ')", "bug, help wanted"),
            ("join(github.event.pull_request.labels.*.name)", "a,[test all]"),
            ("join(github.event.pull_request.labels.*.name, '\n')", "a\n[test all]"),
            ("join(github.event.nothing.labels.*.name, ',')", ""), ("join('abc')", "abc"),
            ("toJSON(fromJSON('{\"a\": [1, 2.5], \"b\": {}}'))", '{\n  "a": [\n    1,\n    2.5\n  ],\n  "b": {}\n}'),
            ("toJSON('x')", '"x"'), ("fromJSON('{\"a\": [1, 2]}').a[1]", 2.0), ("fromJSON('true')", True),
            ("case(false, 'a', 1 == 1, 'b', 'c')", "b"),
            # property access
            ("github.event.pull_request.base.sha", "abc"), ("github['event_name']", "pull_request"),
            ("github.EVENT_NAME", "pull_request"), ("github.event.missing.deeper", None),
            ("github.event.pull_request.labels[1].name", "[test all]"),
            ("github.event.pull_request.commits", 3), ("inputs.n == 2", True), ("env.X", "1"),
        ]
        for text, expected in table:
            with self.subTest(text):
                got = self.ev(text)
                if isinstance(expected, float):
                    self.assertAlmostEqual(got, expected)
                else:
                    self.assertEqual(got, expected)

    def test_unknown_function_and_context_are_errors(self):
        for text in ("nothing('a')", "matrix.os", "secrets.TOKEN", "success()", "job.status"):
            with self.subTest(text), self.assertRaises(ar.ExpressionError):
                self.ev(text)

    def test_syntax_errors(self):
        for text in ("\"double\"", "'open", "1 ==", "a.", "(1", "format('{0}')", "format('}')", "fromJSON('{')", ""):
            with self.subTest(text), self.assertRaises(ar.ExpressionError):
                self.ev(text)

    def test_hash_files_as_github(self):
        os.makedirs(os.path.join(self.workspace, "d/sub"))
        for name, data in (("d/b.txt", b"b"), ("d/a.txt", b"a"), ("d/sub/c.txt", b"c"), ("d/x.bin", b"x")):
            with open(os.path.join(self.workspace, name), "wb") as f:
                f.write(data)
        outer = hashlib.sha256()
        for data in (b"a", b"b", b"c"):      # d/a.txt, d/b.txt, d/sub/c.txt: walk order
            outer.update(hashlib.sha256(data).digest())
        self.assertEqual(self.ev("hashFiles('**/*.txt')"), outer.hexdigest())
        self.assertEqual(self.ev("hashFiles('d/*.txt', 'd/sub/**')"), outer.hexdigest())
        self.assertEqual(self.ev("hashFiles('nothing/*')"), "")
        only_bin = hashlib.sha256(hashlib.sha256(b"x").digest()).hexdigest()
        self.assertEqual(self.ev("hashFiles('d', '!**/*.txt')"), only_bin)

    def test_templates(self):
        self.assertEqual(ar.evaluate_template("a-${{ 1 }}-${{ 'x' }}", self.scope), "a-1-x")
        self.assertEqual(ar.evaluate_template("${{ '}}' }}", self.scope), "}}")
        self.assertEqual(ar.evaluate_template("${{ github.event.pull_request.commits }}", self.scope), 3)
        self.assertEqual(ar.template_string("${{ github.event.pull_request.commits }}", self.scope, "x"), "3")
        with self.assertRaises(ar.ActionError):
            ar.template_string("${{ github.event }}", self.scope, "x")
        with self.assertRaises(ar.ExpressionError):
            ar.evaluate_template("${{ 1 ", self.scope)

    def test_conditions(self):
        self.assertEqual(ar.condition_text(None), "success()")
        self.assertEqual(ar.condition_text("${{ always() }}"), " always() ")
        # text around ${{ }} makes a non-empty string: always true on GitHub
        self.assertEqual(ar.condition_text("${{ false }} == true"), "format('{0} == true',  false )")


class CompositeActionTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.root)
        self.workspace = os.path.join(self.root, "ws")
        os.makedirs(self.workspace)
        self.log = io.StringIO()

    def runner(self, **extra):
        context = {"github": {"event_name": "pull_request", "ref": "refs/pull/1/merge", "base_ref": "main",
                              "sha": "m" * 40, "run_number": 7,
                              "event": {"pull_request": {"base": {"sha": "b" * 40}, "title": "T"}}},
                   "runner": {"temp": os.path.join(self.root, "tmp")},
                   "cache_dir": os.path.join(self.root, "cache")}
        context.update(extra)
        return ar.ActionRunner(context, workspace=self.workspace, log=self.log)

    def action(self, text, folder="action"):
        directory = os.path.join(self.root, folder)
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, "action.yml")
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        return path

    def test_inputs_outputs_if_and_continue_on_error(self):
        path = self.action("""
            name: t
            inputs:
              who:
                required: true
              base:
                default: ${{ github.event.pull_request.base.sha }}
              unset:
                required: false
            outputs:
              greeting:
                value: ${{ steps.one.outputs.greeting }}
              base:
                value: ${{ steps.one.outputs.base }}
              env-seen:
                value: ${{ steps.two.outputs.foo }}
              after:
                value: ${{ steps.after.outputs.ran }}
              bad-outcome:
                value: ${{ steps.bad.outcome }}/${{ steps.bad.conclusion }}
              skipped:
                value: ${{ steps.skipped.outcome }}
            runs:
              using: composite
              steps:
                - id: one
                  shell: bash
                  env:
                    WHO: ${{ inputs.who }}
                  run: |
                    echo "greeting=hello $WHO" >> "$GITHUB_OUTPUT"
                    echo "base=${{ inputs.base }}${{ inputs.unset }}" >> "$GITHUB_OUTPUT"
                    echo "FOO=from-env-file" >> "$GITHUB_ENV"
                    mkdir -p "$RUNNER_TEMP/bin" && printf '#!/bin/sh\\necho tool\\n' > "$RUNNER_TEMP/bin/ste-tool"
                    chmod +x "$RUNNER_TEMP/bin/ste-tool"
                    echo "$RUNNER_TEMP/bin" >> "$GITHUB_PATH"
                - id: two
                  shell: bash
                  run: |
                    [ "$(ste-tool)" = tool ]
                    echo "foo=$FOO/${{ env.FOO }}" >> "$GITHUB_OUTPUT"
                - id: bad
                  shell: bash
                  continue-on-error: true
                  run: exit 3
                - id: after
                  if: steps.bad.outcome == 'failure'
                  shell: bash
                  run: echo "ran=yes" >> "$GITHUB_OUTPUT"
                - name: the failing step
                  shell: bash
                  run: exit 4
                - id: skipped
                  shell: bash
                  run: echo "should not run" && exit 1
                - id: always
                  if: always()
                  shell: bash
                  run: echo "x=1" >> "$GITHUB_OUTPUT"
                - id: on-failure
                  if: failure() && steps.always.outputs.x == 1
                  shell: bash
                  run: echo "x=1" >> "$GITHUB_OUTPUT"
            """)
        result = self.runner().run(path, {"who": "Mona"})
        self.assertFalse(result.success)
        self.assertEqual(result.failed_step, "the failing step")
        self.assertEqual(result.outputs, {"greeting": "hello Mona", "base": "b" * 40, "env-seen": "from-env-file/from-env-file",
                                          "after": "yes", "bad-outcome": "failure/success", "skipped": "skipped"})
        outcomes = {s.id or s.name: s.outcome for s in result.steps}
        self.assertEqual(outcomes, {"one": "success", "two": "success", "bad": "failure", "after": "success",
                                    "the failing step": "failure", "skipped": "skipped", "always": "success",
                                    "on-failure": "success"})

    def test_missing_required_input_is_an_error(self):
        path = self.action("""
            inputs:
              who:
                required: true
            runs:
              using: composite
              steps: []
            """)
        with self.assertRaisesRegex(ar.ActionError, "required input 'who'"):
            self.runner().run(path, {})

    def test_expression_error_fails_the_step(self):
        path = self.action("""
            runs:
              using: composite
              steps:
                - shell: bash
                  run: echo ${{ secrets.TOKEN }}
            """)
        result = self.runner().run(path, {})
        self.assertFalse(result.success)
        self.assertIn("Unrecognized named-value: 'secrets'", " ".join(result.steps[0].failures))

    def test_file_command_error_fails_the_step_but_keeps_earlier_values(self):
        path = self.action("""
            outputs:
              a:
                value: ${{ steps.s.outputs.a }}
            runs:
              using: composite
              steps:
                - id: s
                  shell: bash
                  run: printf 'a=1\\nb<<EOF\\nnever closed\\n' >> "$GITHUB_OUTPUT"
            """)
        result = self.runner().run(path, {})
        self.assertFalse(result.success)
        self.assertEqual(result.outputs, {"a": "1"})

    def test_stdout_commands_and_stop_commands(self):
        path = self.action("""
            outputs:
              printed:
                value: ${{ steps.s.outputs.printed }}
              stopped:
                value: ${{ steps.t.outputs.stopped }}
            runs:
              using: composite
              steps:
                - id: s
                  shell: bash
                  run: |
                    echo "a file named ##[set-output name=printed;]forged"
                - id: t
                  shell: bash
                  run: |
                    echo "::stop-commands::0123456789abcdef"
                    echo "::set-output name=stopped::forged" >&2
            """)
        result = self.runner().run(path, {})
        self.assertTrue(result.success)
        self.assertEqual(result.outputs, {"printed": "forged", "stopped": ""})

    def test_step_summary_over_one_mib_is_dropped_with_an_error(self):
        path = self.action("""
            runs:
              using: composite
              steps:
                - shell: bash
                  run: echo "# small" >> "$GITHUB_STEP_SUMMARY"
                - shell: bash
                  run: head -c 1048577 /dev/zero | tr '\\0' x >> "$GITHUB_STEP_SUMMARY"
                - shell: bash
                  run: head -c 1048576 /dev/zero | tr '\\0' y >> "$GITHUB_STEP_SUMMARY"
            """)
        result = self.runner().run(path, {})
        self.assertTrue(result.success)
        self.assertEqual(result.steps[0].summary, "# small\n")
        self.assertIsNone(result.steps[1].summary)
        self.assertIn("upload aborted", result.steps[1].annotations[0][1])
        self.assertEqual(len(result.steps[2].summary), 1048576)

    def test_nested_local_and_mapped_actions(self):
        inner = self.action("""
            inputs:
              v:
                default: d
            outputs:
              out:
                value: ${{ steps.s.outputs.out }}
            runs:
              using: composite
              steps:
                - id: s
                  shell: bash
                  run: echo "out=${{ inputs.v }}-$OUTER-$(basename "$GITHUB_ACTION_PATH")" >> "$GITHUB_OUTPUT"
            """, folder="ws/inner")
        outer = self.action("""
            outputs:
              local:
                value: ${{ steps.local.outputs.out }}
              mapped:
                value: ${{ steps.mapped.outputs.out }}
            runs:
              using: composite
              steps:
                - id: local
                  uses: ./inner
                  env:
                    OUTER: o
                  with:
                    v: x
                - id: mapped
                  uses: your-org/ste/inner@v1
            """)
        result = self.runner(actions={"your-org/ste/inner@v1": os.path.dirname(inner)}).run(outer, {})
        self.assertTrue(result.success, self.log.getvalue())
        self.assertEqual(result.outputs, {"local": "x-o-inner", "mapped": "d--inner"})

    def test_unknown_uses_fails(self):
        path = self.action("""
            runs:
              using: composite
              steps:
                - uses: actions/upload-artifact@v4
            """)
        result = self.runner().run(path, {})
        self.assertFalse(result.success)
        self.assertIn("not emulated", result.steps[0].failures[0])


class CacheTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.root)
        self.workspace = os.path.join(self.root, "ws")
        os.makedirs(self.workspace)
        self.restore = os.path.join(self.root, "restore", "action.yml")
        self.save = os.path.join(self.root, "save", "action.yml")
        for path, text in ((self.restore, """
                inputs:
                  key: {}
                  restore-keys: {default: ""}
                outputs:
                  hit: {value: "${{ steps.r.outputs.cache-hit }}"}
                  matched: {value: "${{ steps.r.outputs.cache-matched-key }}"}
                runs:
                  using: composite
                  steps:
                    - id: r
                      uses: actions/cache/restore@v4
                      with:
                        path: data/file.txt
                        key: ${{ inputs.key }}
                        restore-keys: ${{ inputs.restore-keys }}
                """), (self.save, """
                inputs:
                  key: {}
                  content: {}
                runs:
                  using: composite
                  steps:
                    - shell: bash
                      run: mkdir -p data && printf '%s' "$CONTENT" > data/file.txt
                      env:
                        CONTENT: ${{ inputs.content }}
                    - uses: actions/cache/save@v4
                      with:
                        path: data/file.txt
                        key: ${{ inputs.key }}
                """)):
            os.makedirs(os.path.dirname(path))
            with open(path, "w") as f:
                f.write(textwrap.dedent(text))

    def runner(self, ref="refs/heads/main", base_ref=""):
        return ar.ActionRunner({"github": {"ref": ref, "base_ref": base_ref},
                                "runner": {"temp": os.path.join(self.root, "tmp")},
                                "cache_dir": os.path.join(self.root, "cache")},
                               workspace=self.workspace, log=io.StringIO())

    def save_entry(self, key, content, ref="refs/heads/main"):
        result = self.runner(ref).run(self.save, {"key": key, "content": content})
        self.assertTrue(result.success)
        return result

    def restore_entry(self, key, restore_keys="", ref="refs/pull/1/merge", base_ref="main"):
        shutil.rmtree(os.path.join(self.workspace, "data"), ignore_errors=True)
        result = self.runner(ref, base_ref).run(self.restore, {"key": key, "restore-keys": restore_keys})
        self.assertTrue(result.success)
        path = os.path.join(self.workspace, "data", "file.txt")
        if not os.path.exists(path):
            return result.outputs, None
        with open(path) as f:
            return result.outputs, f.read()

    def test_restore_order(self):
        self.save_entry("ste-baseline-main-1", "one")
        self.save_entry("ste-baseline-main-2", "two")
        self.save_entry("ste-baseline-other-9", "other")
        # exact key: a hit
        self.assertEqual(self.restore_entry("ste-baseline-main-1"),
                         ({"hit": "true", "matched": "ste-baseline-main-1"}, "one"))
        # no exact key: the newest entry with a restore key as prefix
        self.assertEqual(self.restore_entry("ste-baseline-main-3", "ste-baseline-main-\nste-baseline-"),
                         ({"hit": "false", "matched": "ste-baseline-main-2"}, "two"))
        # restore keys are tried in their order, not by age
        self.assertEqual(self.restore_entry("ste-baseline-main-3", "ste-baseline-o\nste-baseline-main-"),
                         ({"hit": "false", "matched": "ste-baseline-other-9"}, "other"))
        # the key itself is a prefix too, before the restore keys
        self.assertEqual(self.restore_entry("ste-baseline-main-", "ste-baseline-o"),
                         ({"hit": "false", "matched": "ste-baseline-main-2"}, "two"))
        # nothing: no output, no file
        self.assertEqual(self.restore_entry("nothing", "none-"), ({"hit": "", "matched": ""}, None))

    def test_save_refuses_an_existing_key_with_a_warning(self):
        self.save_entry("k", "first")
        result = self.save_entry("k", "second")
        self.assertIn("Unable to reserve cache with key k", result.steps[1].annotations[0][1])
        self.assertEqual(self.restore_entry("k")[1], "first")

    def test_scopes(self):
        # A pull request into main sees main's entries, not another branch's.
        self.save_entry("k-feature", "feature", ref="refs/heads/feature")
        self.save_entry("k-main", "main")
        self.assertEqual(self.restore_entry("k-x", "k-")[1], "main")
        self.assertEqual(self.restore_entry("k-x", "k-", ref="refs/heads/feature", base_ref="")[1], "feature")


if __name__ == "__main__":
    unittest.main(verbosity=1)
