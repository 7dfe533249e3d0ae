// Files in src/ stay short enough to read at once, and so do functions. Biome's
// noExcessiveLinesPerFunction let an 84-line route registrar through, so functions are measured here:
// every function-like node from its first line to its last, the functions nested in it counted inside.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const max_file_lines = 300;
const max_function_lines = 70;

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

const function_like = new Set([
  ts.SyntaxKind.FunctionDeclaration,
  ts.SyntaxKind.FunctionExpression,
  ts.SyntaxKind.ArrowFunction,
  ts.SyntaxKind.MethodDeclaration,
  ts.SyntaxKind.Constructor,
  ts.SyntaxKind.GetAccessor,
  ts.SyntaxKind.SetAccessor,
]);

/** Its own name, else the name it is given (`const f = () => …`, `{ f: () => … }`), else what it is passed to. */
function nameOf(node, source) {
  if (node.kind === ts.SyntaxKind.Constructor) return 'constructor';
  if (node.name) return node.name.getText(source);
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.name)
    return parent.name.getText(source);
  if (ts.isCallExpression(parent)) return `(argument of ${parent.expression.getText(source)})`;
  return '(anonymous)';
}

function longFunctions(path) {
  const text = readFileSync(path, 'utf8');
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found = [];
  const visit = (node) => {
    if (function_like.has(node.kind)) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > max_function_lines) found.push({ path, line: first + 1, name: nameOf(node, source), lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const all = [...files('src'), ...files('packages/sandbox-psp/src')];
const long = all.map((path) => ({ path, lines: readFileSync(path, 'utf8').split('\n').length - 1 })).filter((f) => f.lines > max_file_lines);
for (const f of long) console.error(`${f.path}: ${f.lines} lines (at most ${max_file_lines})`);
const longFns = all.flatMap(longFunctions);
for (const f of longFns) console.error(`${f.path}:${f.line} ${f.name}: ${f.lines} lines (at most ${max_function_lines})`);
process.exit(long.length + longFns.length > 0 ? 1 : 0);
