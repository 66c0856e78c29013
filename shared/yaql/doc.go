// Package yaql evaluates the yaql expressions of Fuel's deployment tasks.
package yaql
