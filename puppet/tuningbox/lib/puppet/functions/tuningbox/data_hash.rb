# frozen_string_literal: true

require_relative '../../../puppet_x/tuningbox/source'

# tuningbox::data_hash is a Hiera 5 data_hash backend: it returns the
# effective document of one tuningbox data source (resource) for a node, so
# Hiera digs keys out of it and caches it for the rest of the compile.
# See the module's README for the options and a hiera.yaml.
Puppet::Functions.create_function(:'tuningbox::data_hash') do
  dispatch :data_hash do
    param 'Hash[String, Data]', :options
    param 'Puppet::LookupContext', :context
  end

  def data_hash(options, context)
    source = PuppetX::Tuningbox::Source.new(options)
    unless source.applicable?
      context.explain { "tuningbox: #{options['resource']} does not apply (an interpolated part is empty)" }
      return {}
    end
    context.explain { "tuningbox: GET #{source.url}#{source.key ? " -> key #{source.key}" : ''}" }
    source.data
  rescue PuppetX::Tuningbox::Error => e
    raise Puppet::DataBinding::LookupError, "tuningbox::data_hash: #{e.message}"
  end
end
