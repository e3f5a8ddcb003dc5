import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "packages/*/dist/", "node_modules/", "data/", "bench/results/", "test-artifacts/", "test/openapi-client/generated/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: "readonly", console: "readonly", setTimeout: "readonly", clearTimeout: "readonly", setImmediate: "readonly", setInterval: "readonly", clearInterval: "readonly", URL: "readonly", Buffer: "readonly", AbortController: "readonly", AbortSignal: "readonly", fetch: "readonly", Response: "readonly", Request: "readonly", Headers: "readonly", TextEncoder: "readonly", TextDecoder: "readonly", structuredClone: "readonly", queueMicrotask: "readonly" } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-restricted-syntax": ["error", { selector: "MemberExpression[object.name='process'][property.name='env']", message: "Read configuration through src/config.ts only." }],
    },
  },
  { files: ["src/config.ts", "test/**", "bench/**", "scripts/**"], rules: { "no-restricted-syntax": "off" } },
  {
    // The Authority's side must stay independent of the bot's: both speak src/authority/.
    files: ["src/authority/**", "src/authority-sim/**"],
    rules: { "no-restricted-imports": ["error", { patterns: [{ group: ["**/bot/*"], message: "Import the protocol from src/authority/, never from src/bot/." }] }] },
  },
);
