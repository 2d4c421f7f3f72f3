package files

import "github.com/hubdev/hub/hub/jsonw"

// AppendJSON appends r's JSON, byte for byte what encoding/json writes for
// it with HTML escaping off (the struct tags stay the reference; a test
// holds the two together). /r answers carry whole files, and reflection was
// a large share of serving one.
func (r *FileResult) AppendJSON(b []byte) []byte {
	b = append(b, `{"path":`...)
	b = jsonw.String(b, r.Path)
	if r.Kind != "" {
		b = append(b, `,"kind":`...)
		b = jsonw.String(b, r.Kind)
	}
	b = append(b, `,"content":`...)
	b = jsonw.String(b, r.Content)
	b = append(b, `,"startLine":`...)
	b = jsonw.Int(b, r.StartLine)
	b = append(b, `,"endLine":`...)
	b = jsonw.Int(b, r.EndLine)
	b = append(b, `,"totalLines":`...)
	b = jsonw.Int(b, r.TotalLines)
	b = append(b, `,"size":`...)
	b = jsonw.Int(b, r.Size)
	if r.Fingerprint != "" {
		b = append(b, `,"fingerprint":`...)
		b = jsonw.String(b, r.Fingerprint)
	}
	b = append(b, `,"complete":`...)
	b = jsonw.Bool(b, r.Complete)
	b = append(b, `,"truncated":`...)
	b = jsonw.Bool(b, r.Truncated)
	if r.NextStartLine != 0 {
		b = append(b, `,"nextStartLine":`...)
		b = jsonw.Int(b, r.NextStartLine)
	}
	if r.StartByte != 0 {
		b = append(b, `,"startByte":`...)
		b = jsonw.Int(b, r.StartByte)
	}
	if r.NextSkip != 0 {
		b = append(b, `,"nextSkip":`...)
		b = jsonw.Int(b, r.NextSkip)
	}
	if r.ClippedLine {
		b = append(b, `,"clippedLine":true`...)
	}
	if r.Binary {
		b = append(b, `,"binary":true`...)
	}
	if r.InvalidUTF8 {
		b = append(b, `,"invalidUtf8":true`...)
	}
	if len(r.Entries) > 0 {
		b = append(b, `,"entries":[`...)
		for i := range r.Entries {
			if i > 0 {
				b = append(b, ',')
			}
			e := &r.Entries[i]
			b = append(b, `{"name":`...)
			b = jsonw.String(b, e.Name)
			b = append(b, `,"kind":`...)
			b = jsonw.String(b, e.Kind)
			if e.Size != 0 {
				b = append(b, `,"size":`...)
				b = jsonw.Int(b, e.Size)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if r.DirPartial {
		b = append(b, `,"dirPartial":true`...)
	}
	if r.Error != nil {
		b = append(b, `,"error":{"code":`...)
		b = jsonw.String(b, r.Error.Code)
		b = append(b, `,"message":`...)
		b = jsonw.String(b, r.Error.Message)
		b = append(b, '}')
	}
	return append(b, '}')
}

// AppendFilesJSON appends files as a JSON array (null when nil, as
// encoding/json writes a nil slice).
func AppendFilesJSON(b []byte, files []FileResult) []byte {
	if files == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range files {
		if i > 0 {
			b = append(b, ',')
		}
		b = files[i].AppendJSON(b)
	}
	return append(b, ']')
}
