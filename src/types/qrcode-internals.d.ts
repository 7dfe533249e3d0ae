// The two tables of `qrcode` that src/domain/qr-symbol.ts reads (the package ships no types for them).
declare module 'qrcode/lib/core/error-correction-level.js' {
  const levels: { L: unknown; M: unknown; Q: unknown; H: unknown };
  export default levels;
}

declare module 'qrcode/lib/core/error-correction-code.js' {
  const ecCode: {
    getBlocksCount(version: number, level: unknown): number;
    getTotalCodewordsCount(version: number, level: unknown): number;
  };
  export default ecCode;
}
