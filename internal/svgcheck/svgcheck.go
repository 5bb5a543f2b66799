// Package svgcheck holds what tests use to check an SVG chart: that it is
// well-formed with an <svg> root, which labels it carries, and whether the
// picture a real renderer (rsvg-convert, Debian package librsvg2-bin) drew
// from it is more than blank. Used by the timeline package's unit tests and the black-box
// tests of `podvisor timeline --svg`.
package svgcheck

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
)

// Texts decodes every token of svg (so it must be well-formed XML with an
// <svg> root) and returns the content of its <text> elements.
func Texts(svg []byte) ([]string, error) {
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var texts []string
	root, inText := "", false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("SVG is not well-formed XML: %w", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = e.Name.Local
			}
			inText = e.Name.Local == "text"
		case xml.CharData:
			if inText {
				texts = append(texts, string(e))
			}
		case xml.EndElement:
			inText = false
		}
	}
	if root != "svg" {
		return nil, fmt.Errorf("root element %q, want svg", root)
	}
	return texts, nil
}

// DecodePNG reads the PNG a renderer wrote. (Running rsvg-convert is left
// to the tests themselves: only internal/proc may start and wait for
// processes outside test files.)
func DecodePNG(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("decode PNG %s: %w", path, err)
	}
	return img, nil
}

// Colours counts the distinct colours of img (every other pixel), up to
// limit: a blank or nearly blank picture has one or two.
func Colours(img image.Image, limit int) int {
	seen := map[[4]uint32]bool{}
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y += 2 {
		for x := bd.Min.X; x < bd.Max.X; x += 2 {
			r, g, b, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, b, a}] = true
			if len(seen) >= limit {
				return len(seen)
			}
		}
	}
	return len(seen)
}
