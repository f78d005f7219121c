package ui

import "github.com/countertop/countertop/model"

// rowRef is a row the user points at (the selection, the detail screen's
// row, a row that left): its ID in the Store (model.Counter.ID), the key
// and the hash field it stands for ("" for a whole key's row), where its
// writes go, and its name as the table shows it, escaped, which still
// names it once it has left the Store.
type rowRef struct {
	id, key, field, name string
	server               string // among several, the server it is on (model.Counter.Server)
}

// refOf is c's row.
func refOf(c *model.Counter) rowRef {
	r := rowRef{id: c.ID(), key: c.Key, name: c.Name(), server: c.Server}
	if c.FieldRow {
		r.field = c.Field
	}
	return r
}

// keyRef is a key typed by name (n): the row of that key, whole.
func keyRef(key string) rowRef { return rowRef{id: key, key: key, name: model.Printable(key)} }

// none reports whether r points at no row.
func (r rowRef) none() bool { return r.id == "" }
