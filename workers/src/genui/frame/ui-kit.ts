import { createElement as h, type CSSProperties, type ReactNode } from "react";
import type { GenuiKitName } from "../component-contract.ts";

/**
 * `@molmesh/ui`: the small kit a component builds with. Trusted code outside the compartment, so every callback
 * hands the component plain values (a string, a boolean), never a DOM event or node: those lead back to `window`.
 * Styles are React style objects (set through the CSSOM, which the frame's `default-src 'none'` does not block).
 */

type Children = { children?: ReactNode };
const font = "system-ui, -apple-system, 'Segoe UI', sans-serif";
const box: CSSProperties = { fontFamily: font, fontSize: 14, color: "#1f2328", boxSizing: "border-box" };
const control: CSSProperties = { ...box, padding: "6px 10px", border: "1px solid #d0d7de", borderRadius: 6 };
const str = (value: unknown) => (typeof value === "string" || typeof value === "number" ? String(value) : "");

export interface KitHost {
  /** A user action that becomes the next turn (`ui/message`). */
  sendMessage(text: string): void;
}

export function createUiKit(host: KitHost): Record<GenuiKitName, unknown> {
  const Stack = ({ children, gap = 8 }: Children & { gap?: number }) =>
    h("div", { style: { display: "flex", flexDirection: "column", gap } }, children);
  const Row = ({ children, gap = 8 }: Children & { gap?: number }) =>
    h("div", { style: { display: "flex", flexDirection: "row", alignItems: "center", gap } }, children);
  const Grid = ({ children, columns = 2, gap = 8 }: Children & { columns?: number; gap?: number }) =>
    h("div", { style: { display: "grid", gridTemplateColumns: `repeat(${columns}, 1fr)`, gap } }, children);
  const Text = ({ children, muted, bold }: Children & { muted?: boolean; bold?: boolean }) =>
    h(
      "span",
      { style: { ...box, color: muted ? "#59636e" : box.color, fontWeight: bold ? 600 : 400 } },
      children,
    );
  const Heading = ({ children, level = 2 }: Children & { level?: 1 | 2 | 3 }) =>
    h(`h${level}`, { style: { ...box, fontSize: [24, 20, 16][level - 1], margin: "4px 0" } }, children);
  const Button = ({
    children,
    onClick,
    message,
    disabled,
    variant = "primary",
  }: Children & {
    onClick?: () => void;
    message?: string;
    disabled?: boolean;
    variant?: "primary" | "plain";
  }) =>
    h(
      "button",
      {
        type: "button",
        disabled,
        style: {
          ...control,
          cursor: "pointer",
          background: variant === "primary" ? "#1f6feb" : "#f6f8fa",
          color: variant === "primary" ? "#fff" : box.color,
        },
        onClick: () => {
          onClick?.();
          if (typeof message === "string" && message) host.sendMessage(message);
        },
      },
      children,
    );
  const Input = ({
    value,
    onChange,
    placeholder,
    label,
  }: {
    value?: string;
    onChange?: (value: string) => void;
    placeholder?: string;
    label?: string;
  }) =>
    h(
      "label",
      { style: { ...box, display: "flex", flexDirection: "column", gap: 4 } },
      label,
      h("input", {
        style: control,
        value: str(value),
        placeholder: str(placeholder),
        onChange: (e: { target: { value: string } }) => onChange?.(e.target.value),
      }),
    );
  const Select = ({
    value,
    options = [],
    onChange,
    label,
  }: {
    value?: string;
    options?: readonly (string | { value: string; label: string })[];
    onChange?: (value: string) => void;
    label?: string;
  }) =>
    h(
      "label",
      { style: { ...box, display: "flex", flexDirection: "column", gap: 4 } },
      label,
      h(
        "select",
        {
          style: control,
          value: str(value),
          onChange: (e: { target: { value: string } }) => onChange?.(e.target.value),
        },
        ...Array.from(options, (o) => {
          const v = typeof o === "string" ? o : str(o.value);
          return h("option", { key: v, value: v }, typeof o === "string" ? o : str(o.label));
        }),
      ),
    );
  const Checkbox = ({
    checked,
    onChange,
    label,
  }: {
    checked?: boolean;
    onChange?: (checked: boolean) => void;
    label?: string;
  }) =>
    h(
      "label",
      { style: { ...box, display: "flex", gap: 6, alignItems: "center" } },
      h("input", {
        type: "checkbox",
        checked: Boolean(checked),
        onChange: (e: { target: { checked: boolean } }) => onChange?.(e.target.checked),
      }),
      label,
    );
  const Card = ({ children, title }: Children & { title?: ReactNode }) =>
    h(
      "section",
      { style: { ...box, border: "1px solid #d0d7de", borderRadius: 8, padding: 12, background: "#fff" } },
      title === undefined ? null : h("h3", { style: { ...box, fontSize: 16, margin: "0 0 8px" } }, title),
      children,
    );
  const Table = ({ columns = [], rows = [] }: { columns?: readonly string[]; rows?: readonly unknown[][] }) =>
    h(
      "table",
      { style: { ...box, borderCollapse: "collapse", width: "100%" } },
      h(
        "thead",
        null,
        h("tr", null, ...Array.from(columns, (c, i) => h("th", { key: i, style: cell }, str(c)))),
      ),
      h(
        "tbody",
        null,
        ...Array.from(rows, (row, r) =>
          h("tr", { key: r }, ...Array.from(row, (v, i) => h("td", { key: i, style: cell }, str(v)))),
        ),
      ),
    );
  const cell: CSSProperties = { borderBottom: "1px solid #d0d7de", padding: "4px 8px", textAlign: "left" };
  const Badge = ({ children }: Children) =>
    h(
      "span",
      { style: { ...box, fontSize: 12, padding: "2px 8px", borderRadius: 10, background: "#ddf4ff" } },
      children,
    );
  const Divider = () => h("hr", { style: { border: 0, borderTop: "1px solid #d0d7de", margin: "8px 0" } });
  /** A bar chart in SVG: enough for an answer's numbers, no chart library in the frame. */
  const Chart = ({
    data = [],
    height = 120,
  }: {
    // Whatever the component passed: it is code the model wrote.
    data?: readonly { label: unknown; value: unknown }[];
    height?: number;
  }) => {
    const points = Array.from(data, (d) => ({ label: str(d.label), value: Number(d.value) || 0 }));
    const max = Math.max(1, ...points.map((p) => p.value));
    const width = Math.max(1, points.length) * 40;
    return h(
      "svg",
      { width, height: height + 16, viewBox: `0 0 ${width} ${height + 16}`, role: "img" },
      ...points.map((p, i) =>
        h(
          "g",
          { key: i },
          h("rect", {
            x: i * 40 + 6,
            y: height - (p.value / max) * height,
            width: 28,
            height: (p.value / max) * height,
            fill: "#1f6feb",
          }),
          h("text", { x: i * 40 + 20, y: height + 12, fontSize: 10, textAnchor: "middle" }, p.label),
        ),
      ),
    );
  };
  const sendMessage = (text: unknown) => host.sendMessage(str(text));
  return {
    Stack,
    Row,
    Grid,
    Text,
    Heading,
    Button,
    Input,
    Select,
    Checkbox,
    Card,
    Table,
    Badge,
    Divider,
    Chart,
    sendMessage,
  };
}
