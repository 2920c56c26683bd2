"""strobe-report, the offline CLI: bad input gets one clear line and a non-zero exit."""
import os
import re
import tempfile
import unittest

import harness


class ReportCliTest(unittest.TestCase):
    def setUp(self):
        if not os.path.exists(harness.STROBE_REPORT):
            self.skipTest("strobe-report not built")

    def report(self, *argv):
        return harness.run([harness.STROBE_REPORT, *argv])

    def test_usage_without_arguments(self):
        rc, out = self.report()
        self.assertEqual(rc, 2)
        self.assertIn("usage: strobe-report FILE", out)

    def test_missing_file(self):
        rc, out = self.report("/nonexistent/trace.strobe")
        self.assertEqual(rc, 1)
        self.assertEqual(out.strip(),
                         "error: cannot open /nonexistent/trace.strobe: No such file or directory")

    def test_not_a_trace_file(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("hello, this is not a trace\n")
        try:
            rc, out = self.report(f.name)
            self.assertEqual(rc, 1)
            self.assertEqual(out.strip(), f"error: {f.name} is not a strobe trace file")
        finally:
            os.unlink(f.name)

    def test_unknown_subcommand_after_a_good_load_is_refused(self):
        rc, out = self.report("/nonexistent/x", "frobnicate")
        self.assertEqual(rc, 1)
        self.assertEqual(len(out.strip().splitlines()), 1)

    def test_help_needs_no_trace_file(self):
        rc, out = self.report("help", "dump")
        self.assertEqual(rc, 0, out)
        self.assertIn("Usage: strobe-report FILE dump", out)
        rc, out = self.report("help")
        self.assertEqual(rc, 0, out)
        listed = re.findall(r"^  (\w+(?: \w+)?) ", out, re.M)
        self.assertIn("profile", listed)
        self.assertIn("mem leaks", listed)
        for live in ("start", "record", "step", "mem start"):
            self.assertNotIn(live, listed, "needs a debugger, so strobe-report does not list it")
        rc, out = self.report("help", "frobnicate")
        self.assertEqual(rc, 1)
        self.assertEqual(out.strip(),
                         "error: no subcommand 'frobnicate'; try 'strobe-report help'")

    def test_help_after_a_missing_file(self):
        # As in the debuggers, --help or -h after a subcommand asks for its help: the file
        # before it need not be there.
        for flag in ("--help", "-h"):
            rc, out = self.report("/nonexistent/x.strobe", "dump", "--thread", "1", flag)
            self.assertEqual(rc, 0, out)
            self.assertIn("Usage: strobe-report FILE dump", out)
            self.assertNotIn("cannot open", out)
            rc, out = self.report("/nonexistent/x.strobe", flag)
            self.assertEqual(rc, 0, out)
            self.assertIn("usage: strobe-report FILE", out)
        rc, out = self.report("/nonexistent/x.strobe", "frobnicate", "--help")
        self.assertEqual(rc, 1)
        self.assertIn("unknown subcommand 'frobnicate'", out)

    def test_a_damaged_step_trace_loses_only_the_damaged_chunk(self):
        with tempfile.TemporaryDirectory() as tmp:
            saved = os.path.join(tmp, "steps.strobe")
            rc, out = harness.gdb(["break walk", "run", "strobe step --count 20000 --quiet",
                                   f"strobe save {saved}", "kill"], harness.fixture("steps"))
            self.assertIn("1 step trace to", out)
            with open(saved, "rb") as f:
                data = bytearray(f.read())
            step_chunks, at = [], 8  # chunks: u32 length, u32 CRC, body; 0x4a: a step trace
            while at < len(data):
                length = int.from_bytes(data[at:at + 4], "little")
                if data[at + 8] == 0x4a:
                    step_chunks.append((at, length))
                at += 8 + length
            self.assertEqual(len(step_chunks), 3, "20001 records: 8192 + 8192 + 3617")
            second, length = step_chunks[1]
            data[second + 8 + length // 2] ^= 0x20
            with open(saved, "wb") as f:
                f.write(data)
            rc, out = self.report(saved, "dump")
        self.assertEqual(rc, 0, out)
        self.assertIn(f"warning: {saved}: corrupt chunk ", out)
        self.assertIn(f" at byte {second} (CRC mismatch); skipped it", out)
        self.assertRegex(out, r"step trace of thread \d+: 11809 records")
        # The records after the lost chunk keep the numbers they were taken with.
        self.assertRegex(out, r"\n\s+8191  0x", out[-2000:])
        self.assertRegex(out, r"\n\s+16384  \(after a gap\) ", out[-2000:])
        self.assertRegex(out, r"\n\s+20000  0x", out[-2000:])
        self.assertNotRegex(out, r"\n\s+8192  ", out[-2000:])


if __name__ == "__main__":
    unittest.main()
