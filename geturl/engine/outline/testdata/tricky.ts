#!/usr/bin/env node
import fs from "node:fs";
import { a, b as c } from './ab';
import * as path from 'path'
import type { Foo } from "./types";
import './side-effect.css';
import def, { named } from
  "../multi-line";
import x = require("legacy");
export { thing } from "./thing";
export * from './all';
export * as ns from './ns';
export type { T1 } from './t1';

// function fake() {} in a comment
/* class Fake {} in a block
   comment spanning lines */
const s1 = "function notReal() { {{{";
const s2 = 'class NotReal { ' + "}}}";
const tmpl = `template ${ `nested ${ "deep }" } }` } function inTemplate() {}`;
const re = /[/{}]function re() {}/g;
const div = 10 / 2 / 1; function afterDivision() {}

export function exported(a: string, b = { x: 1 }): Promise<{ ok: boolean }> {
  const inner = () => {};
  function nested() {}
  return fetch(`/api/${a}`).then(r => r.json());
}

export default async function main() {
  await import('./lazy');
  const m = require('cjs-mod');
}

export async function* gen() {}

export const arrow = (x: number): number => x * 2;
export const asyncArrow = async (x) => {
  return x;
};
const single = y => y + 1;
let plain = 42, fnExpr = function () {}, other;
var { destructured } = obj;
export const generic = <T,>(v: T) => v;

export class Widget extends Base<{ a: 1 }> implements IWidget {
  private count = 0;
  static create(): Widget { return new Widget(); }
  constructor(private readonly dep: Dep) { super(); }
  get value() { return this.count; }
  set value(v) { this.count = v; }
  async load(): Promise<void> {
    if (x) /regex{/.test(y);
  }
  handle = (e: Event) => { this.count++; };
  #secret() {}
  'quoted'() {}
  [Symbol.iterator]() {}
}

abstract class Shape {
  abstract area(): number;
}

export interface Props {
  name: string;
  onClick(): void;
}

export type Id = string | number;
type Generic<T> = { value: T };

export enum Color { Red, Green }
export const enum Flags { A = 1 }
declare module 'ambient' {
  export function fromAmbient(): void;
}
namespace Outer.Inner {
  export const v = 1;
}
export declare function declared(x: number): void;

function overload(a: string): void;
function overload(a: any) {}

if (cond) {
  function notTopLevel() {}
}

const obj2 = {
  method() {},
};

export { exported as renamed, plainLocal };
function plainLocal() {}
