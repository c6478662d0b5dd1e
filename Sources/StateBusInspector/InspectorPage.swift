/// The inspector's page: HTML, CSS and a little JavaScript, served as one document from the
/// binary (no build step, nothing from a CDN). It reads server-sent events from `/events` and
/// posts edits and seeks (``InspectorMessage``).
enum InspectorPage {
    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>StateBus inspector</title>
        <style>
          body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f6f7f9; }
          header { background: #1d2330; color: #fff; padding: 10px 18px; display: flex; gap: 18px; align-items: baseline; }
          header h1 { font-size: 17px; margin: 0; }
          header .where { opacity: .75; font-family: ui-monospace, monospace; font-size: 12px; }
          #link { margin-left: auto; font-size: 12px; }
          main { display: grid; grid-template-columns: minmax(420px, 2fr) minmax(300px, 1fr); gap: 16px; padding: 16px; }
          section { background: #fff; border: 1px solid #dde1e7; border-radius: 6px; padding: 10px 14px; margin-bottom: 16px; }
          h2 { font-size: 15px; margin: 2px 0 8px; display: flex; gap: 10px; align-items: baseline; }
          h2 small { font-weight: normal; color: #667; }
          table { width: 100%; border-collapse: collapse; }
          td { padding: 5px 4px; border-top: 1px solid #eef0f3; vertical-align: top; }
          td.name { font-family: ui-monospace, monospace; width: 24%; }
          td.type { color: #667; width: 14%; font-size: 12px; }
          input { width: 100%; box-sizing: border-box; font: 13px ui-monospace, monospace; padding: 3px 5px; border: 1px solid #c9ced6; border-radius: 4px; }
          input.dirty { border-color: #c98a00; background: #fffbea; }
          .readonly { font-family: ui-monospace, monospace; color: #333; }
          .verdict { font-size: 12px; margin-top: 2px; min-height: 0; }
          .verdict.ok { color: #1a7f37; }
          .verdict.no { color: #c62828; }
          .live { color: #1a7f37; } .stale, .connecting, .syncing, .closed { color: #c62828; }
          canvas { width: 100%; height: 80px; background: #fbfbfc; border: 1px solid #eef0f3; }
          ul { padding-left: 18px; margin: 4px 0; font-size: 13px; }
          .figure { font-size: 20px; font-weight: 600; }
        </style>
        </head>
        <body>
        <header><h1>StateBus inspector</h1><span class="where" id="where">connecting…</span><span id="link">●</span></header>
        <main>
          <div>
            <section id="timeline" hidden><h2>Recording <small id="at"></small></h2>
              <input type="range" id="scrub" min="0" max="0" step="1" value="0">
              <div class="verdict" id="seekNote">Move the slider to see the object at any recorded sequence (time travel).</div></section>
            <div id="objects"></div>
          </div>
          <div>
            <section><h2>Updates per second <small id="ups">–</small></h2><canvas id="upsChart" width="320" height="80"></canvas></section>
            <section><h2>Write round trip <small id="rtt">no edit yet</small></h2><canvas id="rttChart" width="320" height="80"></canvas></section>
            <section><h2>Connected views <small id="viewCount"></small></h2><ul id="views"></ul></section>
          </div>
        </main>
        <script>
        "use strict";
        const state = { objects: [] };
        const dirty = new Set();
        const series = { ups: [], rtt: [] };
        let events;
        const key = (o, p) => o + "." + p;
        const esc = s => String(s).replace(/[&<>"]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
        const shown = p => p.isString ? (p.text ?? "") : p.json;

        function handle(message) {
          if (message.type === "state") render(message);
          else if (message.type === "stats") stats(message);
          else if (message.type === "verdict") verdict(message);
          else if (message.type === "position") position(message);
        }

        // The state and the figures come as server-sent events; the browser connects again
        // by itself when the stream breaks.
        function connect() {
          const link = document.getElementById("link");
          events = new EventSource("/events");
          events.onopen = () => { link.textContent = "● connected"; link.className = "live"; };
          events.onerror = () => { link.textContent = "● disconnected, retrying"; link.className = "stale"; };
          events.onmessage = event => handle(JSON.parse(event.data));
        }

        // An edit or a seek, answered with the host's verdict (or the replay's position).
        async function post(path, message) {
          try {
            const response = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(message) });
            if (response.ok) { handle(await response.json()); return; }
            const reason = (await response.text()).trim();
            if (path === "/write") handle({ type: "verdict", object: message.object, property: message.property, accepted: false, reason });
            else handle({ type: "position", at: 0, error: reason });
          } catch (error) {
            if (path === "/write") handle({ type: "verdict", object: message.object, property: message.property, accepted: false, reason: "the inspector did not answer: " + error });
            else handle({ type: "position", at: 0, error: "the inspector did not answer: " + error });
          }
        }

        function render(message) {
          document.getElementById("where").textContent = "host " + message.host + " at " + message.endpoint +
            (message.group ? " (the leader of a group of " + message.group.length + ": " + message.group.join(", ") + ")" : "");
          if (message.timeline) timeline(message.timeline);
          const root = document.getElementById("objects");
          for (const object of message.objects) {
            let section = document.getElementById("object-" + object.name);
            if (!section) {
              section = document.createElement("section");
              section.id = "object-" + object.name;
              section.innerHTML = "<h2>" + esc(object.name) + " <small class='meta'></small></h2><table><tbody></tbody></table>";
              root.appendChild(section);
            }
            section.querySelector(".meta").innerHTML = "<span class='" + esc(object.connection) + "'>" + esc(object.connection) + "</span> · sequence " + object.sequence;
            const body = section.querySelector("tbody");
            for (const property of object.properties) {
              const id = key(object.name, property.name);
              let row = document.getElementById("row-" + id);
              if (!row) {
                row = document.createElement("tr");
                row.id = "row-" + id;
                const flags = (property.writable ? "" : " read-only") + (property.persisted ? " persisted" : "");
                row.innerHTML = "<td class='name'>" + esc(property.name) + "</td><td class='type'>" + esc(property.type) + esc(flags) + "</td><td class='value'></td>";
                const cell = row.querySelector(".value");
                if (property.writable) {
                  const input = document.createElement("input");
                  input.id = "edit-" + id;
                  input.dataset.object = object.name;
                  input.dataset.property = property.name;
                  input.dataset.isString = property.isString ? "1" : "";
                  // A field being edited is never overwritten by the host's changes: from
                  // focus until its verdict, or until it is left unchanged.
                  input.addEventListener("focus", () => dirty.add(id));
                  input.addEventListener("blur", () => { const p = current(id); if (p && input.value === shown(p)) { dirty.delete(id); input.classList.remove("dirty"); } });
                  input.addEventListener("input", () => { dirty.add(id); input.classList.add("dirty"); });
                  input.addEventListener("keydown", event => { if (event.key === "Enter") submit(input); if (event.key === "Escape") revert(id); });
                  cell.appendChild(input);
                } else {
                  const span = document.createElement("span");
                  span.className = "readonly";
                  span.id = "value-" + id;
                  cell.appendChild(span);
                }
                const note = document.createElement("div");
                note.className = "verdict";
                note.id = "verdict-" + id;
                cell.appendChild(note);
                body.appendChild(row);
              }
              const input = document.getElementById("edit-" + id);
              if (input && !dirty.has(id)) input.value = shown(property);
              const span = document.getElementById("value-" + id);
              if (span) span.textContent = shown(property);
            }
          }
          state.objects = message.objects;
        }

        let sequences = [];
        function timeline(t) {
          const section = document.getElementById("timeline"), scrub = document.getElementById("scrub");
          if (section.hidden) {
            section.hidden = false;
            sequences = t.sequences;
            scrub.max = String(sequences.length - 1);
            scrub.value = String(sequences.indexOf(t.at));
            scrub.addEventListener("input", () => { document.getElementById("at").textContent = "sequence " + sequences[Number(scrub.value)] + " (moving…)"; });
            scrub.addEventListener("change", () => post("/seek", { type: "seek", sequence: sequences[Number(scrub.value)] }));
          }
          document.getElementById("at").textContent = "sequence " + t.at + " of " + t.first + "–" + t.last;
        }

        function position(message) {
          const note = document.getElementById("seekNote");
          note.className = "verdict " + (message.error ? "no" : "ok");
          note.textContent = message.error ? "✗ " + message.error : "showing the recording at sequence " + message.at;
          note.dataset.at = String(message.at);
        }

        function current(id) {
          for (const object of state.objects) for (const property of object.properties) if (key(object.name, property.name) === id) return property;
          return null;
        }

        // Shows the host's value again; a field that still has the focus stays protected
        // from the host's changes (the person may be typing the next value).
        function revert(id, value) {
          const input = document.getElementById("edit-" + id);
          if (!input || document.activeElement !== input) dirty.delete(id);
          const property = current(id);
          if (input && (value != null || property)) { input.value = value != null ? value : shown(property); input.classList.remove("dirty"); }
        }

        function submit(input) {
          const json = input.dataset.isString ? JSON.stringify(input.value) : input.value;
          const note = document.getElementById("verdict-" + key(input.dataset.object, input.dataset.property));
          note.className = "verdict"; note.textContent = "sent…";
          post("/write", { type: "write", object: input.dataset.object, property: input.dataset.property, json });
        }

        function verdict(message) {
          const id = key(message.object, message.property);
          const note = document.getElementById("verdict-" + id);
          if (note) { note.className = "verdict " + (message.accepted ? "ok" : "no"); note.textContent = (message.accepted ? "✓ " : "✗ rejected: ") + message.reason + (message.roundTripMs != null ? " (" + message.roundTripMs.toFixed(1) + " ms)" : ""); }
          revert(id, message.shown);
          if (message.roundTripMs != null) {
            document.getElementById("rtt").textContent = message.roundTripMs.toFixed(1) + " ms";
            push(series.rtt, message.roundTripMs); draw("rttChart", series.rtt, "ms");
          }
        }

        function stats(message) {
          document.getElementById("ups").textContent = message.updatesPerSecond.toFixed(0) + " /s";
          push(series.ups, message.updatesPerSecond); draw("upsChart", series.ups, "/s");
          const list = document.getElementById("views");
          list.innerHTML = "";
          if (message.viewsError) { list.innerHTML = "<li>" + esc(message.viewsError) + "</li>"; return; }
          for (const view of message.views) {
            const item = document.createElement("li");
            item.textContent = (view.relay ? "relay " : "") + (view.node || "(no name)") + " · " + view.viewID.slice(0, 8) + " · " + Math.round(view.connectedSeconds) + " s" + (view.key ? " · key " + view.key : "");
            list.appendChild(item);
          }
          document.getElementById("viewCount").textContent = (message.views.length + message.viewsOmitted) + " connected";
        }

        function push(values, value) { values.push(value); if (values.length > 60) values.shift(); }

        function draw(id, values, unit) {
          const canvas = document.getElementById(id), g = canvas.getContext("2d");
          g.clearRect(0, 0, canvas.width, canvas.height);
          if (!values.length) return;
          const top = Math.max(1, ...values) * 1.15;
          const at = i => [values.length === 1 ? canvas.width / 2 : i * (canvas.width - 8) / (values.length - 1) + 4, canvas.height - 6 - (values[i] / top) * (canvas.height - 20)];
          g.strokeStyle = "#1f77b4"; g.fillStyle = "#1f77b4"; g.lineWidth = 2; g.beginPath();
          values.forEach((v, i) => { const [x, y] = at(i); i ? g.lineTo(x, y) : g.moveTo(x, y); });
          g.stroke();
          values.forEach((v, i) => { const [x, y] = at(i); g.beginPath(); g.arc(x, y, 2.5, 0, 2 * Math.PI); g.fill(); });
          g.fillStyle = "#667"; g.font = "11px system-ui"; g.fillText("max " + top.toFixed(top < 10 ? 1 : 0) + " " + unit, 4, 11);
        }

        connect();
        </script>
        </body>
        </html>
        """#
}
