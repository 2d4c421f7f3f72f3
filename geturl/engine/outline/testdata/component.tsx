import React, { useState } from 'react';
import styles from './styles.module.css';

type ButtonProps = { label: string };

export const Button = ({ label }: ButtonProps) => {
  const [n, setN] = useState(0);
  return (
    <button className={styles.btn} onClick={() => setN(n + 1)} title="it's a 'quote'">
      Don't {label} {n > 1 ? <b>many</b> : <i>{`few ${n}`}</i>}
      {/* function inComment() {} */}
      <>fragment's text {'}'}</>
    </button>
  );
};

export function List<T>({ items }: { items: T[] }) {
  return <ul>{items.map((it, i) => <li key={i}>{String(it)}</li>)}</ul>;
}

const generic = <T,>(x: T) => x;
const Lazy = React.lazy(() => import('./Heavy'));

export default function App() {
  return <div><Button label="a/b" /><List items={[1, 2]} /></div>;
}
