# SPDX-License-Identifier: MIT
"""A small driver of headless Firefox through WebDriver BiDi.

The same interface as cdp.Browser (goto, eval, pump, problems, requests,
mouse, click, wheel, drag, type_into, screenshot, close), so that
check-page runs its checks in either browser. Debian's firefox-esr and
python3-websocket, nothing else: a fresh profile whose prefs turn off
Firefox's own network traffic (updates, telemetry, remote settings), the
page's every request recorded, console messages and uncaught errors
collected as they come. Values come back through JSON.stringify, so an
expression gives what it gives in cdp.py (numbers, strings, arrays, plain
objects).
"""
import base64
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time

import websocket

PREFS = {
    "app.update.auto": False, "app.update.enabled": False,
    "browser.shell.checkDefaultBrowser": False, "browser.startup.homepage_override.mstone": "ignore",
    "datareporting.policy.dataSubmissionEnabled": False, "toolkit.telemetry.enabled": False,
    "datareporting.healthreport.uploadEnabled": False, "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False, "extensions.update.enabled": False,
    "services.settings.server": "http://127.0.0.1:9/", "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False, "browser.newtabpage.enabled": False,
    "browser.aboutwelcome.enabled": False, "messaging-system.rsexperimentloader.enabled": False,
    "app.normandy.enabled": False,
}


def firefox_path():
    for name in ("firefox-esr", "firefox"):
        p = shutil.which(name)
        if p:
            return p
    return None


class Browser:
    def __init__(self, width=1400, height=900, timeout=60):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="tsarun-firefox.")
        with open(os.path.join(self.profile, "user.js"), "w") as f:
            for k, v in PREFS.items():
                f.write(f"user_pref({json.dumps(k)}, {json.dumps(v)});\n")
        self.proc = subprocess.Popen(
            [firefox_path(), "--headless", "--no-remote", "--profile", self.profile,
             "--remote-debugging-port", "0", "--width", str(width), "--height", str(height),
             "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        url = None
        deadline = time.time() + timeout
        for line in self.proc.stdout:
            m = re.search(r"WebDriver BiDi listening on (ws://\S+)", line)
            if m:
                url = m.group(1)
                break
            if time.time() > deadline:
                break
        if not url:
            self.close()
            raise RuntimeError("firefox did not open its WebDriver BiDi port")
        threading.Thread(target=lambda: [None for _ in self.proc.stdout], daemon=True).start()
        # Firefox refuses a handshake with an Origin header.
        self.ws = websocket.create_connection(url.rstrip("/") + "/session", timeout=timeout,
                                              suppress_origin=True)
        self.next_id = 0
        self.events = []
        self.call("session.new", {"capabilities": {}})
        self.call("session.subscribe", {"events": ["log.entryAdded", "network.beforeRequestSent"]})
        self.context = self.call("browsingContext.getTree", {})["contexts"][0]["context"]
        self.call("browsingContext.setViewport",
                  {"context": self.context, "viewport": {"width": width, "height": height}})
        self.width, self.height = width, height

    def call(self, method, params=None):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params or {}}))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if reply.get("type") == "error":
                    raise RuntimeError(f"{method}: {reply.get('error')}: {reply.get('message')}")
                return reply.get("result", {})
            if reply.get("type") == "event":
                self.events.append(reply)

    def pump(self, seconds):
        """Collect the events that arrive within seconds."""
        self.ws.settimeout(seconds)
        try:
            while True:
                m = json.loads(self.ws.recv())
                if m.get("type") == "event":
                    self.events.append(m)
        except websocket.WebSocketTimeoutException:
            pass
        finally:
            self.ws.settimeout(self.timeout)

    def goto(self, url, ready="document.body && document.body.dataset.ready"):
        self.events.clear()
        t0 = time.time()
        self.call("browsingContext.navigate", {"context": self.context, "url": url, "wait": "none"})
        while time.time() - t0 < self.timeout:
            try:
                state = self.eval(ready)
            except RuntimeError:
                state = None  # the old document went away under the evaluation
            if state:
                return time.time() - t0, state
            self.pump(0.05)
        raise RuntimeError(f"{url}: not ready after {self.timeout} s")

    def eval(self, expr):
        r = self.call("script.evaluate", {
            "expression": f"(async () => JSON.stringify(await ({expr})))()",
            "target": {"context": self.context}, "awaitPromise": True, "resultOwnership": "none"})
        if r.get("type") == "exception":
            d = r.get("exceptionDetails", {})
            raise RuntimeError(f"evaluating {expr!r}: {d.get('text')}")
        v = r.get("result", {})
        if v.get("type") != "string":
            return None  # JSON.stringify(undefined)
        return json.loads(v["value"])

    def problems(self):
        """Console errors and warnings, uncaught exceptions, as text."""
        out = []
        for e in self.events:
            if e.get("method") != "log.entryAdded":
                continue
            p = e.get("params", {})
            if p.get("level") in ("error", "warn"):
                out.append(f"{p.get('type')}.{p.get('level')}: {p.get('text', '')}")
        return out

    def requests(self):
        """The URLs the page asked for."""
        # Firefox reports data: URLs too (its own form controls' font); they reach no network.
        return [e["params"]["request"]["url"] for e in self.events
                if e.get("method") == "network.beforeRequestSent"
                and not e["params"]["request"]["url"].startswith("data:")]

    def _pointer(self, actions):
        self.call("input.performActions", {"context": self.context, "actions": [
            {"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}, "actions": actions}]})

    def mouse(self, kind, x, y, **kw):
        x, y = int(round(x)), int(round(y))
        if kind == "mouseWheel":
            self.wheel(x, y, kw.get("deltaY", 0))
        elif kind == "mouseMoved":
            self._pointer([{"type": "pointerMove", "x": x, "y": y}])
        elif kind == "mousePressed":
            self._pointer([{"type": "pointerMove", "x": x, "y": y}, {"type": "pointerDown", "button": 0}])
        elif kind == "mouseReleased":
            self._pointer([{"type": "pointerMove", "x": x, "y": y}, {"type": "pointerUp", "button": 0}])
        else:
            raise ValueError(kind)

    def click(self, x, y):
        x, y = int(round(x)), int(round(y))
        self._pointer([{"type": "pointerMove", "x": x, "y": y},
                       {"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}])

    def wheel(self, x, y, dy):
        self.call("input.performActions", {"context": self.context, "actions": [
            {"type": "wheel", "id": "wheel", "actions": [
                {"type": "scroll", "x": int(round(x)), "y": int(round(y)), "deltaX": 0, "deltaY": int(dy)}]}]})

    def drag(self, x0, y0, x1, y1, steps=8):
        acts = [{"type": "pointerMove", "x": int(round(x0)), "y": int(round(y0))},
                {"type": "pointerDown", "button": 0}]
        for i in range(1, steps + 1):
            acts.append({"type": "pointerMove", "x": int(round(x0 + (x1 - x0) * i / steps)),
                         "y": int(round(y0 + (y1 - y0) * i / steps)), "duration": 10})
        acts.append({"type": "pointerUp", "button": 0})
        self._pointer(acts)

    def type_into(self, selector, text):
        # Keys go where the focus is: a click on the field gives it (focus() from a script may not).
        x, y = self.eval(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); "
                         "e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect(); "
                         "return [r.x + r.width / 2, r.y + r.height / 2]; })()")
        self.click(x, y)
        keys = []
        for c in text:
            keys += [{"type": "keyDown", "value": c}, {"type": "keyUp", "value": c}]
        self.call("input.performActions", {"context": self.context, "actions": [
            {"type": "key", "id": "keyboard", "actions": keys}]})

    def screenshot(self, path, clip=None):
        params = {"context": self.context}
        if clip:
            params["origin"] = "document"
            params["clip"] = dict(clip, type="box")
        data = self.call("browsingContext.captureScreenshot", params)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            if getattr(self, "ws", None):
                try:
                    self.call("session.end", {})
                except Exception:
                    pass
                self.ws.close()
        finally:
            if self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            shutil.rmtree(self.profile, ignore_errors=True)
