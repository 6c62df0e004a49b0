#!/usr/bin/env bash
# The status page's screenshot in docs/operating.md: a release firn with a
# 64 MB memory budget holding four times that (600,000 values of 400
# bytes; cold reads past 20 ms logged), under hot GETs (1,000 keys), cold
# GETs (the whole range) and
# SETs from firn-load for 40 s; headless Chromium opens the page after 10 s
# and takes the picture 25 s later, in real time (through its DevTools
# protocol, from Node).
#
#   bench/status_screenshot.sh [out.png]    (default docs/status-page.png)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/lib.sh"

out="${1:-$here/../docs/status-page.png}"
build
port=$(free_port)
metrics=$(free_port)
start_firn firn "$port" --maxmemory 64mb --metrics-port "$metrics" --cold-read-log-slower-than 20000
"$load" --port "$port" --mode load --keys 600000 --value-size 400 >/dev/null
seconds=40
"$load" --port "$port" --mode get --keys 1000 --clients 2 --seconds "$seconds" >/dev/null &
pids+=($!)
"$load" --port "$port" --mode get --keys 600000 --clients 4 --seconds "$seconds" >/dev/null &
pids+=($!)
"$load" --port "$port" --mode set --keys 600000 --clients 2 --value-size 400 --seconds "$seconds" >/dev/null &
pids+=($!)
sleep 10
profile="$work/chromium"
# Chromium with its DevTools port; after 25 s of real time (25 one-second
# samples on every chart) Node (20's WebSocket) asks it for the picture.
devtools=$(free_port)
chromium --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --no-first-run --user-data-dir="$profile" --hide-scrollbars \
    --window-size=1500,1300 --remote-debugging-port="$devtools" \
    "http://127.0.0.1:$metrics/" >/dev/null 2>&1 &
pids+=($!)
timeout 90 node --experimental-websocket --no-warnings - "$devtools" "$out" <<'JS'
const [port, out] = process.argv.slice(2);
const sleep = ms => new Promise(r => setTimeout(r, ms));
(async () => {
  let page;
  for (let i = 0; i < 100 && !page; i++) {
    try {
      const targets = await (await fetch(`http://127.0.0.1:${port}/json`)).json();
      page = targets.find(t => t.type === "page");
    } catch (e) {}
    if (!page) await sleep(100);
  }
  await sleep(25000);
  const ws = new WebSocket(page.webSocketDebuggerUrl);
  await new Promise(r => ws.addEventListener("open", r));
  ws.send(JSON.stringify({ id: 1, method: "Page.captureScreenshot", params: { format: "png" } }));
  const reply = await new Promise(r => ws.addEventListener("message", e => r(JSON.parse(e.data))));
  require("fs").writeFileSync(out, Buffer.from(reply.result.data, "base64"));
  ws.close();
})().catch(e => { console.error(e); process.exit(1); });
JS
echo "wrote $out"
