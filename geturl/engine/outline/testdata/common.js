'use strict';
const path = require('path');
const { join } = require("path");
const maybe = cond ? require('a') : null;
obj.require('not-a-module');

function helper(a) {
  return a < b ? a : b;
}

class Legacy {
  method() { return 1 }
}

module.exports = { helper };
module.exports.extra = function () {};
exports.other = (x) => x;
exports.value = 42;

const el = <div onClick={() => helper(1)}>text with ' apostrophe</div>;
function afterJSX() {}
