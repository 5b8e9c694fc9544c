// New passwords too easy to guess: those of the offline list of common and leaked passwords (whole, in any case, or
// padded with digits and marks) and simple patterns are refused by every form that sets a password, with a message
// that says why; long passwords of unrelated words pass.
import { describe, expect, it } from "vitest";
import { weakPassword } from "../../src/portal/common-passwords.ts";
import { parseForm, PasswordChangeSchema, ResetSchema, SignUpSchema } from "../../src/portal/forms.ts";

describe("new passwords", () => {
  it.each([
    ["password1234", "common"],
    ["PASSWORD1234", "common"],
    ["qwertyuiop123", "common"],
    ["!!sunshine2024", "common"],
    ["iloveyou12345", "common"],
    ["aaaaaaaaaaaa", "pattern"],
    ["abcabcabcabc", "pattern"],
    ["123412341234", "pattern"],
    ["abcdefghijklm", "pattern"],
    ["zyxwvutsrqpo", "pattern"],
    ["correct horse battery", null],
    ["the right password", null],
    ["a long password", null],
    ["qw12345678901", null], // a short list entry ("qw") is not a core
    ["Überbrückung-Kaffee", null],
  ] as const)("%s: %s", (password, expected) => {
    expect(weakPassword(password)).toBe(expected);
  });

  it("are refused by sign-up, reset and password change with a clear message", () => {
    for (const [password, message] of [
      ["password1234", /one of the most common ones, found in leaked password lists/],
      ["aaaaaaaaaaaa", /a simple pattern \(a short piece repeated/],
    ] as const)
      for (const form of [
        parseForm(SignUpSchema, { email: "a@example.test", password, partner: "P" }),
        parseForm(ResetSchema, { token: "t", password }),
        parseForm(PasswordChangeSchema, { current: "anything", password }),
      ]) {
        expect(form.ok).toBe(false);
        if (!form.ok) expect(form.errors.password).toMatch(message);
      }
    // The length rule still comes first.
    const short = parseForm(SignUpSchema, { email: "a@example.test", password: "password", partner: "P" });
    expect(short.ok || short.errors.password).toBe("Password must be at least 12 characters");
    expect(
      parseForm(SignUpSchema, { email: "a@example.test", password: "correct horse battery", partner: "P" }).ok,
    ).toBe(true);
  });
});
