// What pi sends at every leaf of pi session files: pi's own
// `buildSessionContext` (after its migrations) and the coding agent's
// `convertToLlm`, from the installed @mariozechner/pi-coding-agent.
//
//   PI_NODE=DIR node scripts/pi/context.mjs FILE...
//
// DIR is where `npm install @mariozechner/pi-coding-agent` was run.
//
// Prints one JSON object per leaf: {"file","leaf","messages","model",
// "thinkingLevel"}. A leaf is an entry no other entry names as its parent.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const pi = await import(
  pathToFileURL(join(process.env.PI_NODE ?? ".", "node_modules/@mariozechner/pi-coding-agent/dist/index.js")).href
);
const { buildSessionContext, convertToLlm, migrateSessionEntries, parseSessionEntries } = pi;

for (const file of process.argv.slice(2)) {
  const entries = parseSessionEntries(readFileSync(file, "utf8"));
  // As pi's loadEntriesFromFile: a file without a session header is empty.
  if (entries.length === 0 || entries[0].type !== "session" || typeof entries[0].id !== "string") {
    process.stdout.write(JSON.stringify({ file, leaf: null, messages: [], model: null, thinkingLevel: "off" }) + "\n");
    continue;
  }
  migrateSessionEntries(entries);
  const named = new Set(entries.map((e) => e.parentId).filter((p) => p));
  const byId = new Map();
  for (const e of entries) byId.set(e.id, e);
  for (const e of entries) {
    if (e.type === "session" || named.has(e.id)) continue;
    const context = buildSessionContext(entries, e.id, byId);
    process.stdout.write(
      JSON.stringify({
        file,
        leaf: e.id,
        messages: convertToLlm(context.messages),
        model: context.model,
        thinkingLevel: context.thinkingLevel,
      }) + "\n",
    );
  }
}
