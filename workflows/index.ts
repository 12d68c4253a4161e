// Every workflow the worker runs. Workflow files import activities with `import type` only.
export {};
