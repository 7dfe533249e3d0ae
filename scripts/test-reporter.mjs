// node:test reporter for one test file run by scripts/test.mjs: silent while the file passes; each
// failure written with its test's path, error and location; then one summary line the runner
// reads. What the file printed itself (a property test's seed, a gateway's log) is kept and shown
// only when the file fails, where it helps.

const SUMMARY = '#file-summary ';
// Written as each test begins to run, so that a file stopped for its time limit names the test it
// was in (test:start comes only once the tests before it are reported, which a hung test never is).
const RUNNING = '#file-running ';
const OUTPUT_LINES_KEPT = 60;
// A file skipped whole says why (and so how to run it), on one line the runner always shows.
const NOTE = '#file-note ';
// A test's measured figures (`t.diagnostic('figure: …')`) are shown the same way, pass or fail.
const FIGURE = 'figure: ';

export default async function* fileReporter(source) {
  const counts = { tests: 0, pass: 0, fail: 0, skipped: 0, todo: 0 };
  const path = [];
  const running = [];
  const output = [];
  for await (const event of source) {
    const { type, data } = event;
    if (type === 'test:start') path[data.nesting] = data.name;
    else if (type === 'test:dequeue') {
      running[data.nesting] = data.name;
      running.length = data.nesting + 1;
      yield `${RUNNING}${JSON.stringify(running)}\n`;
    } else if (type === 'test:diagnostic' && data.message.startsWith(FIGURE)) {
      yield `${NOTE}${data.message.slice(FIGURE.length)}\n`;
    } else if (type === 'test:stdout' || type === 'test:stderr') {
      output.push(data.message);
      if (output.length > OUTPUT_LINES_KEPT) output.shift();
    } else if (type === 'test:pass' || type === 'test:fail') {
      // A suite is reported like a test: counted only when it failed by itself (a hook), not by its tests.
      const error = data.details?.error;
      // A skipped suite counts as one skipped test (its tests are never reported).
      const suite = data.details?.type === 'suite';
      if (suite && data.skip === undefined && (type === 'test:pass' || error?.failureType === 'subtestsFailed')) continue;
      counts.tests++;
      if (data.skip !== undefined && data.nesting === 0 && typeof data.skip === 'string') yield `${NOTE}${data.name}: skipped, ${data.skip}\n`;
      if (data.skip !== undefined) counts.skipped++;
      else if (data.todo !== undefined) counts.todo++;
      else if (type === 'test:pass') counts.pass++;
      else {
        counts.fail++;
        yield failure([...path.slice(0, data.nesting), data.name], data);
      }
    }
  }
  if (counts.fail > 0 && output.length > 0)
    yield `  what the file printed (last ${OUTPUT_LINES_KEPT} writes):\n${output.join('').replace(/^/gm, '    ')}\n`;
  yield `${SUMMARY}${JSON.stringify(counts)}\n`;
}

function failure(names, data) {
  const error = data.details?.error;
  const cause = error?.cause ?? error;
  const message = String(cause?.message ?? cause ?? 'failed').trim();
  // The frames in our code (node's own add nothing); the file's line numbers come from its source map.
  const frames = typeof cause?.stack === 'string' ? cause.stack.split('\n').filter((l) => /^\s+at /.test(l) && !l.includes('node:')) : [];
  const stack = frames
    .slice(0, 4)
    .map((l) => l.trim())
    .join('\n');
  return `  ✖ ${names.join(' › ')}\n${indent(message)}\n${stack ? `${indent(stack)}\n` : ''}`;
}

const indent = (text) => text.replace(/^/gm, '      ');
