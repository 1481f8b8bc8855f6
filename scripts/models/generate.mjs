// Writes agentmsg's model list (runtime/src/providers/catalog/models.json) to
// standard output from pi's generated model list, `dist/models.generated.js` of
// the npm package @mariozechner/pi-ai (pi generates it from models.dev).
//
//   node generate.mjs PATH/TO/models.generated.js VERSION PUBLISHED_DATE
//
// Run through update.sh, which fetches the package. The output is sorted and
// holds one model a line, so a regeneration's diff reads model by model.

import { pathToFileURL } from "node:url";

const [file, version, published] = process.argv.slice(2);
if (!file || !version || !published) {
    console.error("usage: node generate.mjs MODELS_GENERATED_JS VERSION PUBLISHED_DATE");
    process.exit(2);
}

// The providers agentmsg speaks to directly, first-party first: a model id
// served by two of them is taken from the first. Aggregators and gateways
// (openrouter, vercel, opencode, cloudflare…) re-list these models.
const PROVIDERS = ["anthropic", "openai", "google", "xai", "deepseek", "mistral", "groq", "cerebras", "zai", "moonshotai"];
// The API each provider is called through by agentmsg (pi's ids); mistral's
// own API is not one of them, its OpenAI-compatible endpoint is.
const APIS = new Set(["anthropic-messages", "openai-responses", "openai-completions", "google-generative-ai"]);
const API_OF = { mistral: "openai-completions" };

const { MODELS } = await import(pathToFileURL(file).href);
const seen = new Set();
const lines = [];
for (const provider of PROVIDERS) {
    const models = MODELS[provider];
    if (!models) {
        console.error(`error: pi-ai ${version} lists no provider \`${provider}\``);
        process.exit(1);
    }
    for (const id of Object.keys(models).sort()) {
        const m = models[id];
        const api = API_OF[provider] ?? m.api;
        if (!APIS.has(api) || seen.has(id)) continue;
        for (const field of ["contextWindow", "maxTokens"]) {
            if (!Number.isInteger(m[field]) || m[field] <= 0) {
                console.error(`error: ${provider}/${id}: ${field} is ${m[field]}`);
                process.exit(1);
            }
        }
        seen.add(id);
        lines.push(JSON.stringify({
            id,
            provider,
            api,
            contextWindow: m.contextWindow,
            maxOutput: m.maxTokens,
            reasoning: Boolean(m.reasoning),
            images: Array.isArray(m.input) && m.input.includes("image"),
        }));
    }
}
const source = `npm:@mariozechner/pi-ai@${version} dist/models.generated.js (pi's list, generated from models.dev)`;
process.stdout.write(
    `{\n  "source": ${JSON.stringify(source)},\n  "date": ${JSON.stringify(published)},\n` +
    `  "regenerate": "scripts/models/update.sh",\n  "models": [\n` +
    lines.map((l) => `    ${l}`).join(",\n") +
    "\n  ]\n}\n",
);
