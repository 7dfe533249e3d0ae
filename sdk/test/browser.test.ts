// browserInfo() (pagar-gateway-sdk/browser) with the browser's globals faked: what it reads from
// navigator, screen and Date, the values it keeps within what the gateway takes, and that the entry
// imports nothing a browser lacks.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterEach, describe, test } from 'node:test';
import { browserInfo, DEFAULT_ACCEPT_HEADER } from '../src/browser.ts';

const iphone =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

/** Sets globalThis[name] for one test; afterEach puts back what was there (Node 20 has no navigator, later versions do). */
const saved = new Map<string, PropertyDescriptor | undefined>();
function fake(name: 'navigator' | 'screen', value: unknown): void {
  if (!saved.has(name)) saved.set(name, Object.getOwnPropertyDescriptor(globalThis, name));
  Object.defineProperty(globalThis, name, { value, configurable: true, writable: true });
}
afterEach(() => {
  for (const [name, descriptor] of saved) {
    if (descriptor) Object.defineProperty(globalThis, name, descriptor);
    else delete (globalThis as Record<string, unknown>)[name];
  }
  saved.clear();
});

const aPhone = () => {
  fake('navigator', { userAgent: iphone, language: 'pt-BR', languages: ['pt-BR', 'en'], javaEnabled: () => false });
  fake('screen', { colorDepth: 24, height: 844, width: 390 });
};

describe('browserInfo()', () => {
  test('reads navigator, screen and the time zone; acceptHeader is the default a script has to take', () => {
    aPhone();
    assert.deepEqual(browserInfo(), {
      userAgent: iphone,
      acceptHeader: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      language: 'pt-BR',
      colorDepth: 24,
      screenHeight: 844,
      screenWidth: 390,
      timeZoneOffset: new Date().getTimezoneOffset(),
      javaEnabled: false,
    });
    assert.equal(DEFAULT_ACCEPT_HEADER, browserInfo().acceptHeader);
  });

  test('the Accept header the seller’s server saw wins over the default', () => {
    aPhone();
    assert.equal(browserInfo({ acceptHeader: 'text/html' }).acceptHeader, 'text/html');
  });

  test('the time zone comes from Date: 180 minutes in Brasília', (t) => {
    aPhone();
    t.mock.method(Date.prototype, 'getTimezoneOffset', () => 180);
    assert.equal(browserInfo().timeZoneOffset, 180);
  });

  test('javaEnabled: whatever navigator.javaEnabled() says, false when it is missing or throws', () => {
    aPhone();
    fake('navigator', { userAgent: iphone, language: 'pt-BR', javaEnabled: () => true });
    assert.equal(browserInfo().javaEnabled, true);
    fake('navigator', { userAgent: iphone, language: 'pt-BR' });
    assert.equal(browserInfo().javaEnabled, false);
    fake('navigator', {
      userAgent: iphone,
      language: 'pt-BR',
      javaEnabled: () => {
        throw new Error('not here');
      },
    });
    assert.equal(browserInfo().javaEnabled, false);
  });

  test('values kept within what the gateway and Adyen take', () => {
    fake('navigator', { userAgent: 'x'.repeat(3000), language: 'not a tag', languages: ['', 'en-US'] });
    fake('screen', { colorDepth: 36, height: 1079.6, width: 0 });
    const info = browserInfo();
    assert.equal(info.userAgent.length, 2048);
    assert.equal(info.language, 'en-US', 'the first of navigator.languages that is a language tag');
    assert.equal(info.colorDepth, 32, 'rounded down to a depth Adyen accepts');
    assert.equal(info.screenHeight, 1080);
    assert.equal(info.screenWidth, 1);
    fake('navigator', { userAgent: iphone });
    fake('screen', { colorDepth: 64 });
    const bare = browserInfo();
    assert.deepEqual([bare.language, bare.colorDepth, bare.screenHeight, bare.screenWidth], ['pt-BR', 48, 1, 1]);
  });

  test('outside a browser it says so', () => {
    fake('navigator', undefined);
    fake('screen', undefined);
    assert.throws(() => browserInfo(), /shopper’s browser/);
  });

  test('the entry imports nothing but types: no Node module reaches the shopper’s page', () => {
    const source = readFileSync(new URL('../src/browser.ts', import.meta.url), 'utf8');
    const imports = source.split('\n').filter((line) => /^\s*(import|export)\b.*\bfrom\b/.test(line));
    assert.ok(imports.length > 0);
    for (const line of imports) assert.match(line, /^(import|export) type /, line);
    assert.doesNotMatch(source, /\b(require|process|Buffer)\b|node:/);
  });
});
