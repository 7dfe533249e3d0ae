/**
 * Stoplight Prism (@stoplight/prism-cli 5.14.x, the last line that runs on Node 20) as a mock server
 * of an OpenAPI file: a second, independent reader of the API Pix file.
 *
 * Run without `--errors`: Prism still checks every request and answers an invalid one with the
 * operation's documented 4xx (400 and its example body for PUT /cob/{txid}), its findings in the
 * `sl-violations` header. With `--errors` it would also turn its own answers into 500s whenever the
 * file's example fails the file's schema, which is the case for every /cob example.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { API_PIX_FILE } from './api-pix-document.ts';

export interface PrismServer {
  /** The mock's root: the file's paths sit right under it (`${url}/cob/…`). */
  url: string;
  /** The last lines Prism printed, for failure messages. */
  output(): string;
  close(): Promise<void>;
}

const OUTPUT_TAIL = 20_000;

/** Prism's CLI entry point, or why it cannot be had (then tests skip with that reason). */
export function prismCli(): { path: string } | { unavailable: string } {
  try {
    const pkg = createRequire(import.meta.url).resolve('@stoplight/prism-cli/package.json');
    return { path: join(dirname(pkg), 'dist', 'index.js') };
  } catch (error) {
    return { unavailable: `@stoplight/prism-cli is not installed: ${(error as Error).message.split('\n')[0]}` };
  }
}

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    // detached: Prism leads its own process group, so this reaches any process it started too.
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}

async function answers(url: string): Promise<boolean> {
  try {
    await fetch(`${url}/`, { signal: AbortSignal.timeout(2_000) });
    return true;
  } catch {
    return false;
  }
}

/** Starts `prism mock FILE` on 127.0.0.1 (ephemeral port) and waits, at most `timeoutMs`, until it answers. */
export async function startPrism(options: { file?: string; timeoutMs?: number } = {}): Promise<PrismServer> {
  const cli = prismCli();
  if ('unavailable' in cli) throw new Error(cli.unavailable);
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  const args = [cli.path, 'mock', options.file ?? API_PIX_FILE, '--port', '0', '--host', '127.0.0.1', '--dynamic', 'false'];
  const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_TAIL);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  // Should the test process end without close(), Prism must not outlive it.
  const onExit = () => killGroup(child, 'SIGKILL');
  process.once('exit', onExit);

  const close = async () => {
    process.removeListener('exit', onExit);
    killGroup(child, 'SIGTERM');
    if (!(await waitForExit(child, 5_000))) {
      killGroup(child, 'SIGKILL');
      await waitForExit(child, 5_000);
    }
  };

  let url: string | undefined;
  while (Date.now() < deadline) {
    url ??= /Prism is listening on (http:\/\/[\d.]+:\d+)/.exec(output)?.[1];
    if (url && (await answers(url))) return { url, output: () => output, close };
    if (child.exitCode !== null || child.signalCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await close();
  const why = child.exitCode !== null ? `exited with ${child.exitCode}` : `did not answer within ${options.timeoutMs ?? 60_000} ms`;
  throw new Error(`Prism ${why}; its output:\n${output}`);
}
