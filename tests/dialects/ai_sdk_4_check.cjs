// Feed AI SDK 4 Message[] threads (a JSON array of threads on stdin) through the real AI SDK 4's
// convertToCoreMessages, offline. One JSON line out: [{ok, name, message}] per thread. Needs AI SDK 4 on
// NODE_PATH as the package `ai4` (npm install ai4@npm:ai@4), beside AI SDK 5+ as `ai`.
const { convertToCoreMessages } = require('ai4');

function judge(messages) {
  try {
    convertToCoreMessages(messages);
    return { ok: true };
  } catch (error) {
    return { ok: false, name: error.name, message: String(error.message).slice(0, 300) };
  }
}

let input = '';
process.stdin.on('data', chunk => (input += chunk));
process.stdin.on('end', () => {
  process.stdout.write(JSON.stringify(JSON.parse(input).map(judge)) + '\n');
});
