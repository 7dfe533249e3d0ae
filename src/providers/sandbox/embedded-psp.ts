/**
 * The embedded PSP (packages/sandbox-psp), loaded only when a rail is the sandbox's: a gateway whose
 * rails are all real never loads its code nor creates its schema. Only its types are named here,
 * and they vanish at compile time.
 */
import type { SandboxPsp, SandboxPspOptions } from '@pagar/sandbox-psp';

export type { SandboxPsp } from '@pagar/sandbox-psp';

export async function openEmbeddedPsp(options: SandboxPspOptions): Promise<SandboxPsp> {
  const { startSandboxPsp } = await import('@pagar/sandbox-psp');
  return startSandboxPsp(options);
}
