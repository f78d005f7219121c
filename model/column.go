package model

// Column is a column of countertop's tables, the dashboard's (ui) and the
// snapshot's (internal/report): one title for one fact wherever it is
// shown. How each table draws it is the table's business.
type Column uint8

const (
	ColumnKey Column = iota
	ColumnValue
	ColumnLimit // the dashboard's share of the limit; the snapshot's limit
	ColumnTTL
	ColumnRate
	ColumnTrend
	ColumnLayout
	ColumnStatus
	ColumnLeft   // the snapshot's: the hits the limit still allows (remaining)
	ColumnServer // the server a row was read on, where several are read
	NumColumns
)

var columnTitles = [NumColumns]string{
	ColumnKey: "KEY", ColumnValue: "VALUE", ColumnLimit: "LIMIT", ColumnTTL: "TTL", ColumnRate: "RATE",
	ColumnTrend: "TREND", ColumnLayout: "LAYOUT", ColumnStatus: "STATUS", ColumnLeft: "LEFT", ColumnServer: "SERVER",
}

// Title is the column's title, as both tables head it.
func (c Column) Title() string {
	if c < NumColumns {
		return columnTitles[c]
	}
	return "?"
}

// Sort is the sort the column stands for, the one a click on its title
// picks; ok is false for a column no sort orders by (TREND, LAYOUT, LEFT).
func (c Column) Sort() (k SortKey, ok bool) {
	for k := range numSortKeys {
		if sorts[k].column == c {
			return k, true
		}
	}
	return 0, false
}

// Column is the column whose values the sort orders by.
func (k SortKey) Column() Column {
	if k < numSortKeys {
		return sorts[k].column
	}
	return NumColumns
}
