"""Opens HTML pages of agent sessions in headless Chromium and prints what
each shows, for the feature table of docs/export.md: the pages agentmsg,
pi's `--export`, claude-code-transcripts and claude-code-log write of the
same files (made beforehand; see docs/export.md for the commands).

    python3 scripts/compare_exports.py [--shots DIR] NAME=PAGE.html ...

For each page, in a fresh headless Chromium (the flags of DEVELOPERS.md,
driven over the DevTools protocol on a pipe, standard library only):
bytes; requests other than the file itself (a page that loads nothing
makes none); the scroll width at a 400 px viewport (fits when it is at
most 400); the computed background of <body> under `prefers-color-scheme`
light and dark; and probes of the DOM: a search box, buttons or links
named collapse/expand, filters, rules for dark mode in its style sheets,
marked diff lines, highlighted code, text showing an escaped `\\n`, and
the number of elements with an id (permalink targets). With --shots, a
screenshot of each page at 1280 and at 400 px.

Nothing here needs the network; it is not run by .ci/run (the other tools
are installed by hand, see docs/export.md).
"""
import base64
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

CHROMIUM = os.environ.get("AGENTMSG_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]

PROBES = r"""
(() => {
  const text = document.body ? document.body.innerText : "";
  const all = Array.from(document.querySelectorAll("*"));
  const named = (re) => all.filter(e => /^(BUTTON|A|SUMMARY|LABEL|OPTION|SELECT)$/.test(e.tagName) && re.test(e.textContent || e.title || "")).length;
  let darkRules = 0;
  for (const sheet of Array.from(document.styleSheets)) {
    let rules = [];
    try { rules = Array.from(sheet.cssRules); } catch (e) {}
    for (const r of rules) if (r.media && /prefers-color-scheme:\s*dark/.test(r.media.mediaText)) darkRules++;
  }
  const diffLines = document.querySelectorAll("[class*=diff] [class*=add], [class*=diff] [class*=del], .diff-add, .diff-del, ins, del, [class*=added], [class*=removed], .add, .del").length;
  const highlighted = document.querySelectorAll("[class^=hl-], [class*=' hl-'], .hljs span, .highlight span, code span[class]").length;
  return {
    search: document.querySelectorAll("input[type=search], input[type=text]").length,
    collapse: named(/collapse|expand/i),
    filters: document.querySelectorAll("select, input[type=checkbox], input[type=radio]").length + named(/filter/i),
    darkRules,
    diffLines,
    highlighted,
    escapedNewlines: (text.match(/\\n/g) || []).length,
    ids: document.querySelectorAll("[id]").length,
    textChars: text.length,
  };
})()
"""

# The background drawn behind the text: <body>'s, else <html>'s, else the
# canvas (white).
BACKGROUND = r"""
(() => {
  for (const e of [document.body, document.documentElement]) {
    const bg = e && getComputedStyle(e).backgroundColor;
    if (bg && bg !== "rgba(0, 0, 0, 0)" && bg !== "transparent") return bg;
  }
  return "canvas (white)";
})()
"""


class Chromium:
    """A headless Chromium with one page, over --remote-debugging-pipe."""

    def __init__(self, width, height):
        self.profile = tempfile.TemporaryDirectory()
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()

        def fds():
            # Copied above 4 first: a pipe's end may be 3 or 4 already.
            a, b = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, *FLAGS, "--remote-debugging-pipe", f"--user-data-dir={self.profile.name}",
             f"--window-size={width},{height}", "about:blank"],
            preexec_fn=fds, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True})["sessionId"]
        for domain in ("Page", "Network", "Runtime"):
            self.call(f"{domain}.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600}, session=True)

    def read(self):
        while b"\0" not in self.buffer:
            chunk = os.read(self.from_child, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=False):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self.to_child, json.dumps(message).encode() + b"\0")
        while True:
            reply = self.read()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def eval(self, expression):
        got = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}, session=True)
        return got["result"].get("value")

    def open(self, url, settle=2.0):
        self.call("Page.navigate", {"url": url}, session=True)
        deadline = time.time() + 120
        while time.time() < deadline:
            if self.eval("document.readyState") == "complete":
                break
            time.sleep(0.1)
        time.sleep(settle)

    def scheme(self, scheme):
        self.call("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]}, session=True)

    def requests_beyond(self, url):
        seen = []
        for e in self.events:
            if e.get("method") == "Network.requestWillBeSent":
                u = e["params"]["request"]["url"]
                if u != url and not u.startswith("data:"):
                    seen.append(u)
        return seen

    def screenshot(self, path):
        shot = self.call("Page.captureScreenshot", {"format": "png"}, session=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))

    def close(self):
        try:
            self.call("Browser.close")
        except Exception:
            pass
        self.proc.wait(timeout=30)
        self.profile.cleanup()


def check(name, path, shots):
    url = "file://" + os.path.abspath(path)
    out = {"page": name, "bytes": os.path.getsize(path)}
    wide = Chromium(1280, 900)
    started = time.time()
    wide.open(url)
    out["load_s"] = round(time.time() - started, 2)
    out.update(wide.eval(PROBES) or {})
    wide.scheme("light")
    out["light_bg"] = wide.eval(BACKGROUND)
    wide.scheme("dark")
    out["dark_bg"] = wide.eval(BACKGROUND)
    wide.scheme("light")
    if shots:
        wide.screenshot(os.path.join(shots, f"{name}-1280.png"))
    out["requests"] = wide.requests_beyond(url)
    wide.close()
    narrow = Chromium(400, 800)
    narrow.open(url)
    out["scroll_width_400"] = narrow.eval("document.documentElement.scrollWidth")
    if shots:
        narrow.screenshot(os.path.join(shots, f"{name}-400.png"))
    narrow.close()
    return out


def main(argv):
    shots = None
    if argv[:1] == ["--shots"]:
        shots, argv = argv[1], argv[2:]
        os.makedirs(shots, exist_ok=True)
    if not argv:
        print(__doc__)
        return 2
    for arg in argv:
        name, path = arg.split("=", 1)
        # A page that never settles (or a Chromium that hangs) ends the run,
        # said, instead of hanging it.
        signal.alarm(600)
        print(json.dumps(check(name, path, shots)), flush=True)
        signal.alarm(0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
