// What pi's own compaction does with pi session files: pi's
// `prepareCompaction` on the path to a leaf, then pi's `compact` with a
// scripted model (pi-ai's faux provider) that answers `HISTORY` to the
// history request and `PREFIX` to the split turn's, so the prompts pi sends
// and the summary and details it would record are pi's own.
//
//   PI_NODE=DIR node scripts/pi/compaction.mjs JOBS.json
//
// DIR is where `npm install @mariozechner/pi-coding-agent` was run. JOBS.json
// is an array of {"file", "leaf", "keep", "focus"} (leaf null: the last
// entry; focus, pi's custom instructions, null for none). Prints
// one JSON object per job: the job, and "plan": null or {"firstKeptEntryId",
// "splitTurn", "tokensBefore", "summarise", "turnPrefix" (entry ids),
// "at" (where those entries are in the file), "prompt", "turnPrefixPrompt", "systemPrompts", "readFiles",
// "modifiedFiles", "summary", "details", "sent" (how many of the summarised
// messages pi's convertToLlm sends)}.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const root = process.env.PI_NODE ?? ".";
const load = (path) => import(pathToFileURL(join(root, "node_modules", path)).href);
const pi = await load("@mariozechner/pi-coding-agent/dist/index.js");
// Not exported from the package's index: pi's own module, the one `compact` lives in.
const { prepareCompaction } = await load("@mariozechner/pi-coding-agent/dist/core/compaction/compaction.js");
const { registerFauxProvider, fauxAssistantMessage } = await load("@mariozechner/pi-ai/dist/index.js");
const { compact, convertToLlm, migrateSessionEntries, parseSessionEntries } = pi;

const faux = registerFauxProvider({ api: "agentmsg-faux", provider: "agentmsg-faux", models: [{ id: "faux" }] });
const model = faux.getModel();
const reserveTokens = 16384;

// A string as a provider reads it: a half of a character (pi's `slice` can
// cut one) as U+FFFD, so the JSON printed is well formed.
const wellFormed = (s) => (typeof s === "string" ? s.toWellFormed() : s);

/** The ids of the path entries `messages` came from, in order. */
function idsOf(messages, path) {
  const ids = [];
  let from = 0;
  for (const m of messages) {
    let found = -1;
    for (let i = from; i < path.length && found < 0; i++) {
      const e = path[i];
      if (e.type === "message" && e.message === m) found = i;
      else if (e.type === "custom_message" && m.role === "custom" && m.content === e.content) found = i;
      else if (e.type === "branch_summary" && m.role === "branchSummary" && m.summary === e.summary && m.fromId === e.fromId)
        found = i;
    }
    ids.push(found < 0 ? null : path[found].id);
    if (found >= 0) from = found + 1;
  }
  return ids;
}

const jobs = JSON.parse(readFileSync(process.argv[2], "utf8"));
for (const job of jobs) {
  const entries = parseSessionEntries(readFileSync(job.file, "utf8"));
  migrateSessionEntries(entries);
  const byId = new Map();
  for (const e of entries) if (e.type !== "session") byId.set(e.id, e);
  const body = entries.filter((e) => e.type !== "session");
  // pi's getBranch: from the leaf up its parents.
  const path = [];
  let at = job.leaf === null ? body[body.length - 1] : byId.get(job.leaf);
  while (at) {
    path.unshift(at);
    at = at.parentId ? byId.get(at.parentId) : undefined;
  }
  const settings = { enabled: true, reserveTokens, keepRecentTokens: job.keep };
  const preparation = prepareCompaction(path, settings);
  if (!preparation) {
    process.stdout.write(JSON.stringify({ ...job, plan: null }) + "\n");
    continue;
  }
  const asked = { history: null, prefix: null, systemPrompts: [] };
  const answer = (context, options) => {
    const text = context.messages[0].content[0].text;
    asked.systemPrompts.push(context.systemPrompt);
    // The turn prefix is asked with half the reserve, the history with 80%.
    if (options.maxTokens === Math.floor(0.5 * reserveTokens)) {
      asked.prefix = text;
      return fauxAssistantMessage("PREFIX");
    }
    asked.history = text;
    return fauxAssistantMessage("HISTORY");
  };
  faux.setResponses([answer, answer]);
  const result = await compact(preparation, model, "key", undefined, job.focus ?? undefined);
  const summarised = [...preparation.messagesToSummarize, ...preparation.turnPrefixMessages];
  // Where each entry is in the file (the header first): a version 1 file's
  // ids are made up, at random, by pi's migration.
  const line = new Map(entries.map((e, i) => [e.id, i]));
  const summarise = idsOf(preparation.messagesToSummarize, path);
  const turnPrefix = idsOf(preparation.turnPrefixMessages, path);
  process.stdout.write(
    JSON.stringify({
      ...job,
      plan: {
        firstKeptEntryId: preparation.firstKeptEntryId,
        splitTurn: preparation.isSplitTurn,
        tokensBefore: preparation.tokensBefore,
        summarise,
        turnPrefix,
        at: {
          firstKeptEntryId: line.get(preparation.firstKeptEntryId),
          summarise: summarise.map((id) => line.get(id)),
          turnPrefix: turnPrefix.map((id) => line.get(id)),
        },
        prompt: wellFormed(asked.history),
        turnPrefixPrompt: wellFormed(asked.prefix),
        systemPrompts: asked.systemPrompts,
        readFiles: result.details.readFiles,
        modifiedFiles: result.details.modifiedFiles,
        summary: wellFormed(result.summary),
        details: result.details,
        sent: convertToLlm(summarised).length,
      },
    }) + "\n",
  );
}
