package autostart

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// renderPlist is the LaunchAgent's property list: Label, ProgramArguments
// (argv, each a <string>, so no shell or launchd quoting applies),
// EnvironmentVariables (env, "KEY=value") when there are any, RunAtLoad
// (start at login) and KeepAlive false (a hub that exits stays stopped).
// Text is XML-escaped (&, <, >); what XML cannot carry is refused
// (checkText).
func renderPlist(label string, argv, env []string) ([]byte, error) {
	for _, s := range append(append([]string{label}, argv...), env...) {
		if err := checkText(s); err != nil {
			return nil, fmt.Errorf("a LaunchAgent cannot run it: %w", err)
		}
	}
	if !strings.HasPrefix(argv[0], "/") {
		return nil, fmt.Errorf("a LaunchAgent needs an absolute program path, got %q", argv[0])
	}
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>` + xmlText(label) + `</string>
	<key>ProgramArguments</key>
	<array>
`)
	for _, a := range argv {
		b.WriteString("\t\t<string>" + xmlText(a) + "</string>\n")
	}
	b.WriteString("\t</array>\n")
	if len(env) > 0 {
		b.WriteString("\t<key>EnvironmentVariables</key>\n\t<dict>\n")
		for _, kv := range env {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return nil, fmt.Errorf("environment entry %q is not KEY=value", kv)
			}
			b.WriteString("\t\t<key>" + xmlText(k) + "</key>\n\t\t<string>" + xmlText(v) + "</string>\n")
		}
		b.WriteString("\t</dict>\n")
	}
	b.WriteString(`	<key>RunAtLoad</key>
	<true/>
	<key>KeepAlive</key>
	<false/>
</dict>
</plist>
`)
	return b.Bytes(), nil
}

// xmlText escapes s for XML character data.
func xmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// parsePlist returns the program a LaunchAgent's plist runs: its
// ProgramArguments, with Program (when set) in place of the first. It
// reads XML property lists only (not the binary form); data is bounded by
// the store (maxEntry).
func parsePlist(data []byte) ([]string, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	// Find the top-level <dict>.
	if err := descend(d, "plist"); err != nil {
		return nil, err
	}
	if err := descend(d, "dict"); err != nil {
		return nil, err
	}
	var program string
	var args []string
	for {
		key, err := nextKey(d)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		start, err := nextStart(d)
		if err != nil {
			return nil, err
		}
		switch {
		case key == "Program" && start.Name.Local == "string":
			if program, err = text(d); err != nil {
				return nil, err
			}
		case key == "ProgramArguments" && start.Name.Local == "array":
			if args, err = stringArray(d); err != nil {
				return nil, err
			}
		default:
			if err := d.Skip(); err != nil {
				return nil, err
			}
		}
	}
	if program != "" {
		if len(args) == 0 {
			args = []string{program}
		} else {
			args[0] = program
		}
	}
	if len(args) == 0 {
		return nil, errors.New("the plist names no program (no ProgramArguments)")
	}
	return args, nil
}

// descend reads up to the start of the next element, which must be name.
func descend(d *xml.Decoder, name string) error {
	start, err := nextStart(d)
	if err == io.EOF {
		return fmt.Errorf("the plist has no <%s>", name)
	}
	if err != nil {
		return err
	}
	if start.Name.Local != name {
		return fmt.Errorf("the plist has <%s> where <%s> belongs", start.Name.Local, name)
	}
	return nil
}

// nextStart returns the next start element, io.EOF at the end of the
// enclosing element (or of the document).
func nextStart(d *xml.Decoder) (xml.StartElement, error) {
	for {
		tok, err := d.Token()
		if err != nil {
			if err == io.EOF {
				return xml.StartElement{}, io.EOF
			}
			return xml.StartElement{}, fmt.Errorf("the plist is not XML: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return t, nil
		case xml.EndElement:
			return xml.StartElement{}, io.EOF
		}
	}
}

// nextKey reads a dict's next <key>, io.EOF at the dict's end.
func nextKey(d *xml.Decoder) (string, error) {
	start, err := nextStart(d)
	if err != nil {
		return "", err
	}
	if start.Name.Local != "key" {
		return "", fmt.Errorf("the plist's dict has <%s> where a <key> belongs", start.Name.Local)
	}
	return text(d)
}

// text reads the character data of the element just started, up to its
// end.
func text(d *xml.Decoder) (string, error) {
	var b strings.Builder
	for {
		tok, err := d.Token()
		if err != nil {
			return "", fmt.Errorf("the plist is not XML: %w", err)
		}
		switch t := tok.(type) {
		case xml.CharData:
			b.Write(t)
		case xml.StartElement:
			return "", fmt.Errorf("the plist has <%s> inside text", t.Name.Local)
		case xml.EndElement:
			return b.String(), nil
		}
	}
}

// stringArray reads the <string> items of the <array> just started.
func stringArray(d *xml.Decoder) ([]string, error) {
	var out []string
	for {
		start, err := nextStart(d)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if start.Name.Local != "string" {
			return nil, fmt.Errorf("ProgramArguments holds <%s>, not <string>", start.Name.Local)
		}
		s, err := text(d)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
}
