// The response schemas refuse a body that drifts: an added field, a price as a number, an unknown problem code.
import { describe, expect, it } from "vitest";
import { checkBody } from "../helpers/check-body.ts";

const reply = (body: string, status = 200, type = "application/json; charset=utf-8") =>
  new Response(body, { status, headers: { "content-type": type } });

const categories = JSON.stringify({ categories: ["Boots"] });
const problem = {
  type: "urn:flash-sale-api:problem:not_found",
  title: "Not found",
  status: 404,
  detail: "no such resource",
  code: "not_found",
};

describe("checkBody", () => {
  it.each([
    ["a categories body", "/v1/products/categories.json", reply(categories)],
    ["a problem", "/v1/nope", reply(JSON.stringify(problem), 404, "application/problem+json")],
    ["a JSONP body", "/v1/products/categories.json", reply(`/**/cb(${categories});`, 200, "application/javascript")],
    [
      "a JSONP error with status 200",
      "/v1/x",
      reply(`/**/cb(${JSON.stringify(problem)});`, 200, "application/javascript"),
    ],
  ])("passes %s", async (_, url, res) => {
    await expect(checkBody(url, res)).resolves.toBeUndefined();
  });

  it.each([
    ["an added field", "/v1/products/categories.json", reply(JSON.stringify({ categories: [], extra: 1 }))],
    ["a wrong type", "/v1/products/categories.json", reply(JSON.stringify({ categories: [1] }))],
    ["an unknown code", "/v1/x", reply(JSON.stringify({ ...problem, code: "oops" }), 404, "application/problem+json")],
    ["a sale list without sales", "/v1/sales/active.json", reply("{}")],
  ])("fails %s", async (_, url, res) => {
    await expect(checkBody(url, res)).rejects.toThrow(/does not match its schema/);
  });
});
