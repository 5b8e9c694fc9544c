// The catalog's validation report: every problem found, each as `file:line: field: what is wrong`.

type Severity = "error" | "warning";

export interface Problem {
  severity: Severity;
  /** File name relative to the catalog directory. */
  file: string;
  /** 1-based line number; 0 when the problem is about the file as a whole. */
  line: number;
  /** Dotted path of the offending field (`skus[2].sale_price`), or "" for the whole line. */
  field: string;
  message: string;
}

/** How many problems of each severity a report prints before it says how many more there are. */
export const MAX_REPORTED_PROBLEMS = 200;

/** Collects problems; keeps counts of all of them but the details of only the first few hundred. */
export class ProblemList {
  readonly errors: Problem[] = [];
  readonly warnings: Problem[] = [];
  errorCount = 0;
  warningCount = 0;

  add(problem: Problem): void {
    if (problem.severity === "error") {
      this.errorCount++;
      if (this.errors.length < MAX_REPORTED_PROBLEMS) this.errors.push(problem);
    } else {
      this.warningCount++;
      if (this.warnings.length < MAX_REPORTED_PROBLEMS) this.warnings.push(problem);
    }
  }

  error(file: string, line: number, field: string, message: string): void {
    this.add({ severity: "error", file, line, field, message });
  }

  warn(file: string, line: number, field: string, message: string): void {
    this.add({ severity: "warning", file, line, field, message });
  }
}

/** `products.ndjson:12: skus[2].sale_price: is above msrp_price 100.00` */
function formatProblem(p: Problem): string {
  const where = p.line > 0 ? `${p.file}:${p.line}` : p.file;
  return p.field ? `${where}: ${p.field}: ${p.message}` : `${where}: ${p.message}`;
}

/** The lines a report prints: each listed problem, then how many more were left out. */
function formatProblems(problems: readonly Problem[], total: number, noun: string): string[] {
  const lines = problems.map(formatProblem);
  if (total > problems.length) lines.push(`... and ${total - problems.length} more ${noun}`);
  return lines;
}

/** Thrown by the loader when a catalog has errors; carries the whole report. */
export class CatalogError extends Error {
  readonly problems: ProblemList;
  constructor(problems: ProblemList) {
    super(
      `catalog has ${problems.errorCount} error${problems.errorCount === 1 ? "" : "s"}` +
        (problems.warningCount ? ` and ${problems.warningCount} warning${problems.warningCount === 1 ? "" : "s"}` : ""),
    );
    this.name = "CatalogError";
    this.problems = problems;
  }

  /** The full report: errors, then warnings, each capped. */
  report(): string {
    return [
      ...formatProblems(this.problems.errors, this.problems.errorCount, "errors"),
      ...formatProblems(this.problems.warnings, this.problems.warningCount, "warnings"),
      this.message,
    ].join("\n");
  }
}
