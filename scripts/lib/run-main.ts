// The end of every operator script: run `main`, exit with its code, or print the error and exit 1.

/** Runs a script's `main` and exits with the code it resolves with; a thrown error is printed as `<name>: <stack>`. */
export function runMain(name: string, main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(`${name}: ${(err as Error).stack ?? String(err)}`);
      process.exit(1);
    },
  );
}
