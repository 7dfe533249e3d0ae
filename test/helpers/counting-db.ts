import type { Db } from '../../src/db/db.ts';

/** The database with its `query` wrapped (a group writer of its own: writers are per database object). */
function wrappedDb(db: Db, query: (run: () => ReturnType<Db['query']>, text: string) => ReturnType<Db['query']>): Db {
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== 'query') return Reflect.get(target, prop, receiver);
      return (text: string, params?: unknown[]) => query(() => target.query(text, params), text);
    },
  });
}

/** The database, each statement's text recorded as it leaves. */
export function countingDb(db: Db, statements: string[]): Db {
  return wrappedDb(db, (run, text) => {
    statements.push(text);
    return run();
  });
}

/** The database, each statement recorded and run at once, its answer held until the test opens its gate. */
export function heldAnswers(db: Db, statements: string[], gate: (() => void)[]): Db {
  return wrappedDb(db, async (run, text) => {
    statements.push(text);
    const answer = await run();
    await new Promise<void>((open) => gate.push(open));
    return answer;
  });
}
