// Feed UIMessage[] threads (a JSON array of threads on stdin) through the real AI SDK, offline:
// validateUIMessages -> convertToModelMessages -> generateText on a mock model. One JSON line out:
// [{ok, name, message}] per thread. Needs the `ai` npm package on NODE_PATH (CommonJS require).
const { validateUIMessages, convertToModelMessages, generateText } = require('ai');
const { MockLanguageModelV3 } = require('ai/test');

const model = new MockLanguageModelV3({
  doGenerate: async () => ({
    content: [{ type: 'text', text: 'ok' }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } },
    warnings: [],
  }),
});

async function judge(messages) {
  try {
    const valid = await validateUIMessages({ messages });
    const modelMessages = await convertToModelMessages(valid);
    await generateText({ model, messages: modelMessages });
    return { ok: true };
  } catch (error) {
    return { ok: false, name: error.name, message: String(error.message).slice(0, 300) };
  }
}

let input = '';
process.stdin.on('data', chunk => (input += chunk));
process.stdin.on('end', async () => {
  const results = [];
  for (const thread of JSON.parse(input)) results.push(await judge(thread));
  process.stdout.write(JSON.stringify(results) + '\n');
});
